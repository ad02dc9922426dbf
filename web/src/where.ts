// "Where the jobs are": the project and location picker of the top bar, filled from
// GET /v1/projects (the projects the caller's token may see and their locations that hold
// resources), and the place a first visit opens.
import { api, ApiError, LocationInfo, ProjectInfo } from './api';
import { describeCounts } from './format';
import { h } from './util';

export const DEFAULT_PARENT = 'projects/local/locations/us-central1';
const KEY = 'trainyard.parent';

export const rememberedParent = () => localStorage.getItem(KEY);
export const rememberParent = (parent: string) => localStorage.setItem(KEY, parent);

const total = (l: LocationInfo) => Object.values(l.resourceCounts).reduce((a, b) => a + b, 0);

// The parent a first visit opens: the location holding the most resources, else the default (or
// the first project the token may see); null while the user is asked for a token (the router
// runs again once signed in).
export async function startingParent(): Promise<string | null> {
  try {
    const projects = (await api.projects()).projects ?? [];
    let best: LocationInfo | null = null;
    for (const p of projects) for (const l of p.locations) if (!best || total(l) > total(best)) best = l;
    if (best) return best.name;
    if (projects.length) return `projects/${projects[0].projectId}/locations/us-central1`;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    /* an older server: the default */
  }
  return DEFAULT_PARENT;
}

// The picker: one select of every project/location that holds something, plus "other…" which
// opens two text boxes. `go(parent)` switches to that parent.
export function wherePicker(parent: string, go: (parent: string) => void): HTMLElement {
  const select = h('select', { id: 'where-select', name: 'where' }) as HTMLSelectElement;
  const other = h('form.where-other', { hidden: true, onsubmit: (e: Event) => {
    e.preventDefault();
    const p = (other.querySelector('[name=project]') as HTMLInputElement).value.trim() || 'local';
    const l = (other.querySelector('[name=location]') as HTMLInputElement).value.trim() || 'us-central1';
    go(`projects/${p}/locations/${l}`);
  } },
  h('label', { for: 'where-project', text: 'Project' }),
  h('input', { id: 'where-project', name: 'project', value: parent.split('/')[1], size: 8 }),
  h('label', { for: 'where-location', text: 'Location' }),
  h('input', { id: 'where-location', name: 'location', value: parent.split('/')[3], size: 11 }),
  h('button', { type: 'submit', text: 'Go' }));
  const fill = (projects: ProjectInfo[]) => {
    const known = projects.some((p) => p.locations.some((l) => l.name === parent));
    select.replaceChildren(
      ...(known ? [] : [h('option', { value: parent, text: `${parent.split('/')[1]} / ${parent.split('/')[3]}`, selected: true })]),
      ...projects.map((p) => h('optgroup', { label: p.projectId },
        ...p.locations.map((l) => h('option', { value: l.name, selected: l.name === parent, text: `${p.projectId} / ${l.locationId} (${describeCounts(l.resourceCounts)})` })),
        ...(p.locations.length ? [] : [h('option', { value: `projects/${p.projectId}/locations/us-central1`, text: `${p.projectId} / us-central1 (empty)` })]))),
      h('option', { value: '', text: 'Other project or location…' }));
  };
  fill([]);
  api.projects().then((r) => fill(r.projects ?? [])).catch(() => { /* keeps the current parent only */ });
  select.addEventListener('change', () => {
    if (select.value) { go(select.value); return; }
    other.hidden = false;
    (other.querySelector('input') as HTMLInputElement).focus();
  });
  return h('div.where', {}, h('label', { for: 'where-select', text: 'Where' }), select, other);
}
