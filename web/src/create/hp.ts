// The hyperparameters step of an HP-tuning job: the metrics to optimise, the parameters with their
// ranges or values and scales, the trial counts and the search algorithm.
import { h } from '../util';
import { inputField, selectField } from './fields';
import { CreateForm, HpParam } from './model';

const TYPES: [string, string][] = [['DOUBLE', 'Double (range)'], ['INTEGER', 'Integer (range)'],
  ['DISCRETE', 'Discrete (values)'], ['CATEGORICAL', 'Categorical (values)']];
const SCALES: [string, string][] = [['UNIT_LINEAR_SCALE', 'Linear'], ['UNIT_LOG_SCALE', 'Log'],
  ['UNIT_REVERSE_LOG_SCALE', 'Reverse log'], ['', 'None']];
const ALGORITHMS: [string, string][] = [['', 'Default (Bayesian optimisation)'], ['GRID_SEARCH', 'Grid search'],
  ['RANDOM_SEARCH', 'Random search']];

function paramRow(list: HpParam[], i: number, render: () => void): HTMLElement {
  const p = list[i];
  const at = `studySpec.parameters[${i}]`;
  const ranged = p.type === 'DOUBLE' || p.type === 'INTEGER';
  const valueSpec = { DOUBLE: 'doubleValueSpec', INTEGER: 'integerValueSpec', DISCRETE: 'discreteValueSpec',
    CATEGORICAL: 'categoricalValueSpec' }[p.type];
  return h('fieldset.param', { 'data-param': i }, h('legend', { text: `Parameter ${i + 1}` }),
    h('div.row', {},
      inputField('Parameter ID', () => p.id, (v) => { p.id = v; }, { path: `${at}.parameterId`, placeholder: 'learning_rate' }),
      selectField('Type', TYPES, () => p.type, (v) => { p.type = v as HpParam['type']; render(); }, { path: at })),
    ranged
      ? h('div.row', {},
        inputField('Minimum', () => p.min, (v) => { p.min = v; }, { path: `${at}.${valueSpec}.minValue`, type: 'number', step: 'any' }),
        inputField('Maximum', () => p.max, (v) => { p.max = v; }, { path: `${at}.${valueSpec}.maxValue`, type: 'number', step: 'any' }))
      : inputField('Values', () => p.values, (v) => { p.values = v; },
        { path: `${at}.${valueSpec}.values`, placeholder: p.type === 'DISCRETE' ? '16, 32, 64' : 'adam, sgd', hint: 'comma-separated' }),
    p.type === 'CATEGORICAL' ? null
      : selectField('Scale', SCALES, () => p.scale, (v) => { p.scale = v as HpParam['scale']; }, { path: `${at}.scaleType` }),
    h('button.remove', { type: 'button', text: 'Remove parameter', onclick: () => { list.splice(i, 1); render(); } }));
}

export function hpSection(f: CreateForm): HTMLElement {
  const metrics = h('div.metrics');
  const params = h('div.params');
  const renderMetrics = () => metrics.replaceChildren(...f.metrics.map((m, i) => h('div.row', { 'data-metric': i },
    inputField(`Metric ${i + 1} ID`, () => m.id, (v) => { m.id = v; },
      { path: `studySpec.metrics[${i}].metricId`, placeholder: 'accuracy', hint: 'as the trainer reports it (hypertune, or metric=value on stdout)' }),
    selectField(`Metric ${i + 1} goal`, [['MAXIMIZE', 'Maximize'], ['MINIMIZE', 'Minimize']], () => m.goal,
      (v) => { m.goal = v as 'MAXIMIZE' | 'MINIMIZE'; }, { path: `studySpec.metrics[${i}].goal` }))),
  h('button', { type: 'button', text: 'Add metric', onclick: () => { f.metrics.push({ id: '', goal: 'MAXIMIZE' }); renderMetrics(); } }));
  const renderParams = () => {
    params.replaceChildren(...f.params.map((_, i) => paramRow(f.params, i, renderParams)),
      h('button', { type: 'button', text: 'Add parameter', onclick: () => {
        f.params.push({ id: '', type: 'DOUBLE', min: '', max: '', values: '', scale: 'UNIT_LINEAR_SCALE' });
        renderParams();
      } }));
  };
  renderMetrics();
  renderParams();
  return h('div.hp', { 'data-field': 'studySpec' },
    h('fieldset.group', { 'data-field': 'studySpec.metrics' }, h('legend', { text: 'Metrics' }),
      h('div.field-error', { role: 'alert', hidden: true }), metrics),
    h('fieldset.group', { 'data-field': 'studySpec.parameters' }, h('legend', { text: 'Parameters' }),
      h('div.field-error', { role: 'alert', hidden: true }), params),
    h('div.row', {},
      inputField('Maximum trials', () => f.maxTrialCount, (v) => { f.maxTrialCount = Number(v); },
        { path: 'maxTrialCount', type: 'number', min: 1 }),
      inputField('Parallel trials', () => f.parallelTrialCount, (v) => { f.parallelTrialCount = Number(v); },
        { path: 'parallelTrialCount', type: 'number', min: 1 }),
      inputField('Maximum failed trials', () => f.maxFailedTrialCount, (v) => { f.maxFailedTrialCount = Number(v); },
        { path: 'maxFailedTrialCount', type: 'number', min: 0, hint: '0: the server default' })),
    selectField('Search algorithm', ALGORITHMS, () => f.algorithm, (v) => { f.algorithm = v as CreateForm['algorithm']; },
      { path: 'studySpec.algorithm' }));
}
