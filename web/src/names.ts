// Links to other resources named by their display names: the name (a resource name) is asked for
// once per page load and the link shows its id until the answer comes (or for good when the
// resource is gone).
import { api } from './api';
import { h, idOf } from './util';

const known = new Map<string, Promise<string | null>>();

function linkTo(name: string, dataLink: string, suffix: string, fetchName: () => Promise<string | undefined>): HTMLElement {
  const a = h('a', { href: `#/${name}${suffix}`, 'data-link': dataLink, text: idOf(name), title: idOf(name) });
  if (!known.has(name)) known.set(name, fetchName().then((n) => n || null, () => null));
  known.get(name)!.then((n) => { if (n) a.textContent = n; });
  return a;
}

// A training pipeline, by its displayName.
export const pipelineLink = (name: string) => linkTo(name, 'pipeline', '', async () => (await api.getPipeline(name)).displayName);

// A model (projects/P/locations/L/models/M, maybe with @version or @alias), by its displayName;
// `version` adds " vN" and opens that version.
export function modelLink(model: string, version?: string): HTMLElement {
  const [name, at] = model.split('@');
  const v = version ?? (at && /^\d+$/.test(at) ? at : undefined);
  const a = linkTo(name, 'model', v ? `?version=${v}` : '', async () => (await api.getModel(name)).displayName);
  if (v) a.append(h('span.sub', { text: ` v${v}` }));
  return a;
}
