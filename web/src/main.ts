// The console's router: the URL hash is the resource name, e.g.
//   #/projects/local/locations/us-central1/customJobs            jobs list
//   #/projects/local/locations/us-central1/customJobs/42         job page
//   #/projects/local/locations/us-central1/hyperparameterTuningJobs[/7]
// Every page returns a function that stops its timers when the page is left.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { jobsPage } from './jobs';
import { jobPage } from './job';
import { studiesPage, studyPage } from './study';
import { h } from './util';

export type Cleanup = () => void;

const DEFAULT_PARENT = 'projects/local/locations/us-central1';
let cleanup: Cleanup | null = null;

function route() {
  cleanup?.();
  cleanup = null;
  const app = document.getElementById('app')!;
  app.replaceChildren();
  let path = location.hash.replace(/^#\/?/, '');
  const m = path.match(/^(projects\/[^/]+\/locations\/[^/]+)(?:\/(customJobs|hyperparameterTuningJobs)(?:\/([^/?]+))?)?/);
  if (!m) {
    path = localStorage.getItem('trainyard.parent') ?? DEFAULT_PARENT;
    location.replace(`#/${path}/customJobs`);
    return;
  }
  const [, parent, collection = 'customJobs', id] = m;
  localStorage.setItem('trainyard.parent', parent);
  renderNav(parent, collection);
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  if (collection === 'customJobs') {
    cleanup = id ? jobPage(app, `${parent}/customJobs/${id}`) : jobsPage(app, parent, params);
  } else {
    cleanup = id ? studyPage(app, `${parent}/hyperparameterTuningJobs/${id}`) : studiesPage(app, parent);
  }
}

function renderNav(parent: string, collection: string) {
  const nav = document.getElementById('nav')!;
  const link = (c: string, label: string) =>
    h(`a${c === collection ? '.active' : ''}`, { href: `#/${parent}/${c}`, text: label });
  const where = h('form.where', {
    onsubmit: (e: Event) => {
      e.preventDefault();
      const p = (where.querySelector('[name=project]') as HTMLInputElement).value.trim() || 'local';
      const l = (where.querySelector('[name=location]') as HTMLInputElement).value.trim() || 'us-central1';
      location.hash = `#/projects/${p}/locations/${l}/${collection}`;
    },
  },
    h('input', { name: 'project', value: parent.split('/')[1], 'aria-label': 'project', size: 8 }),
    h('input', { name: 'location', value: parent.split('/')[3], 'aria-label': 'location', size: 11 }),
    h('button', { type: 'submit', text: 'Go' }));
  nav.replaceChildren(link('customJobs', 'Custom jobs'), link('hyperparameterTuningJobs', 'HP tuning'), where);
}

window.addEventListener('hashchange', route);
route();
