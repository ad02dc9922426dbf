// Who the console is acting as (GET /v1/caller) and what that lets it do: create and delete need
// the editor role on the project shown; the console hides those buttons otherwise and says why.
import { api, Caller } from './api';

let caller: Promise<Caller> | null = null;

// The caller, asked once per sign-in (forget() after the token changes).
export function currentCaller(): Promise<Caller> {
  caller ??= api.caller().catch((e) => { caller = null; throw e; });
  return caller;
}

export function forgetCaller() { caller = null; }

// null when `c` may create and delete in `project`; otherwise the reason, for the user.
export function writeDenied(c: Caller, project: string): string | null {
  if (c.project !== '*' && c.project !== project) {
    return `Your token is for project "${c.project}", not "${project}": you can only look here.`;
  }
  if (!c.access.write) {
    return `Your token has the ${c.role} role on "${c.project}", which can read but not create, cancel or delete. ` +
      'Ask for an editor token (trainyard auth create-token --role editor).';
  }
  return null;
}

// Resolves to the reason writing is refused in `project`, or null; a failed /v1/caller (an older
// server) is treated as allowed: the server still checks every request.
export async function whyReadOnly(project: string): Promise<string | null> {
  try { return writeDenied(await currentCaller(), project); } catch { return null; }
}

// `actions` (create, cancel, delete buttons) shown only when the caller may write in `project`;
// otherwise hidden, with a note saying why.
export function guardWrite(project: string, actions: HTMLElement): HTMLElement {
  actions.hidden = true;
  const note = document.createElement('p');
  note.className = 'readonly-note';
  note.hidden = true;
  whyReadOnly(project).then((why) => {
    actions.hidden = !!why;
    note.hidden = !why;
    note.textContent = why ?? '';
  });
  const box = document.createElement('div');
  box.className = 'guarded';
  box.append(actions, note);
  return box;
}
