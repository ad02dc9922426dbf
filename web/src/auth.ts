// The access token the console sends (`Authorization: Bearer ty1_...`, docs/security.md). A server
// started with --auth answers 401 without one; the console then asks for a token and keeps it for
// this tab (sessionStorage), or on this browser (localStorage) when the user asks it to.
import { h } from './util';

const KEY = 'trainyard.token';

export function token(): string | null {
  return sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
}

export function setToken(value: string, remember: boolean) {
  forgetToken();
  (remember ? localStorage : sessionStorage).setItem(KEY, value);
}

export function forgetToken() {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

// Called by api.ts on a 401: shows the sign-in form once (later 401s while it is open are ignored);
// `done` runs after a token was entered.
let open = false;
export function askForToken(reason: string, done: () => void) {
  if (open) return;
  open = true;
  const input = h('input', {
    type: 'password', name: 'token', autocomplete: 'off', required: true,
    placeholder: 'ty1_…', 'aria-label': 'access token', size: 40,
  }) as HTMLInputElement;
  const remember = h('input', { type: 'checkbox', name: 'remember' }) as HTMLInputElement;
  const form = h('form.signin', {
    onsubmit: (e: Event) => {
      e.preventDefault();
      const value = input.value.trim();
      if (!value) return;
      setToken(value, remember.checked);
      open = false;
      dialog.remove();
      done();
    },
  },
    h('h2', { text: 'Access token' }),
    h('p', { text: reason }),
    h('p.hint', { text: 'Create one with: trainyard auth create-token --data-dir DIR --project P --role viewer' }),
    input,
    h('label', {}, remember, ' remember on this browser'),
    h('button', { type: 'submit', text: 'Sign in' }));
  const dialog = h('div.signin-backdrop', { role: 'dialog', 'aria-modal': 'true' }, form);
  document.body.append(dialog);
  input.focus();
}
