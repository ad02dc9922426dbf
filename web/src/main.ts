// The console's router: the URL hash is the resource name, e.g.
//   #/projects/local/locations/us-central1/customJobs            jobs list
//   #/projects/local/locations/us-central1/customJobs/42         job page
//   #/projects/local/locations/us-central1/hyperparameterTuningJobs[/7]
//   #/projects/local/locations/us-central1/trainingPipelines[/9]
//   #/projects/local/locations/us-central1/models[/m]
//   #/projects/local/locations/us-central1/endpoints[/e]
//   #/projects/local/locations/us-central1/batchPredictionJobs[/b][?create=1&model=NAME]
//   #/projects/local/locations/us-central1/create[?kind=customJob|hpTuningJob]
// Every page returns a function that stops its timers when the page is left.
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { setOnSignedIn } from './api';
import { forgetToken, token } from './auth';
import { batchPredictionPage, batchPredictionsPage } from './batch';
import { createPage } from './create/create_page';
import { endpointPage, endpointsPage } from './endpoints';
import { jobsPage } from './jobs';
import { jobPage } from './job';
import { modelPage, modelsPage } from './models';
import { pipelinePage, pipelinesPage } from './pipelines';
import { forgetCaller, whyReadOnly } from './session';
import { studiesPage, studyPage } from './study';
import { h, type Cleanup } from './util';
import { rememberedParent, rememberParent, startingParent, wherePicker } from './where';

const COLLECTIONS = ['customJobs', 'hyperparameterTuningJobs', 'trainingPipelines', 'models', 'endpoints',
  'batchPredictionJobs', 'create'];
let cleanup: Cleanup | null = null;
let generation = 0;

async function route() {
  cleanup?.();
  cleanup = null;
  const gen = ++generation;
  const app = document.getElementById('app')!;
  app.replaceChildren();
  const path = location.hash.replace(/^#\/?/, '').split('?')[0];
  const m = path.match(/^(projects\/[^/]+\/locations\/[^/]+)(?:\/([A-Za-z]+)(?:\/([^/]+))?)?$/);
  if (!m || (m[2] && !COLLECTIONS.includes(m[2]))) {
    // A first visit opens where the jobs are; later ones where the user last was.
    const parent = rememberedParent() ?? await startingParent();
    if (parent && gen === generation) location.replace(`#/${parent}/customJobs`);
    return;
  }
  const [, parent, collection = 'customJobs', id] = m;
  rememberParent(parent);
  renderNav(parent, collection);
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const name = `${parent}/${collection}/${id}`;
  switch (collection) {
    case 'customJobs': cleanup = id ? jobPage(app, name) : jobsPage(app, parent, params); break;
    case 'hyperparameterTuningJobs': cleanup = id ? studyPage(app, name) : studiesPage(app, parent); break;
    case 'trainingPipelines': cleanup = id ? pipelinePage(app, name) : pipelinesPage(app, parent); break;
    case 'models': cleanup = id ? modelPage(app, name) : modelsPage(app, parent); break;
    case 'endpoints': cleanup = id ? endpointPage(app, name) : endpointsPage(app, parent); break;
    case 'batchPredictionJobs': cleanup = id ? batchPredictionPage(app, name) : batchPredictionsPage(app, parent, params); break;
    default: cleanup = createPage(app, parent, params.get('kind') ?? 'pipeline');
  }
}

function renderNav(parent: string, collection: string) {
  const nav = document.getElementById('nav')!;
  const link = (c: string, label: string) =>
    h(`a${c === collection ? '.active' : ''}`, { href: `#/${parent}/${c}`, text: label });
  const create = h('a.create', { href: `#/${parent}/create`, text: '+ Create', hidden: true, 'data-action': 'create' });
  const notice = h('span.readonly', { hidden: true });
  whyReadOnly(parent.split('/')[1]).then((why) => {
    create.hidden = !!why;
    notice.hidden = !why;
    notice.textContent = why ? 'read-only' : '';
    notice.title = why ?? '';
  });
  const signOut = token()
    ? h('button.link', { type: 'button', text: 'Sign out', onclick: () => { forgetToken(); forgetCaller(); route(); } })
    : null;
  nav.replaceChildren(link('customJobs', 'Custom jobs'), link('hyperparameterTuningJobs', 'HP tuning'),
    link('trainingPipelines', 'Training pipelines'), link('models', 'Models'), link('endpoints', 'Endpoints'),
    link('batchPredictionJobs', 'Batch predictions'), create, notice,
    wherePicker(parent, (p) => { location.hash = `#/${p}/${collection === 'create' ? 'customJobs' : collection}`; }),
    signOut ?? '');
}

setOnSignedIn(() => { forgetCaller(); route(); });

window.addEventListener('hashchange', route);
route();
