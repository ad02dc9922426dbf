// The compute step: worker pools 0–3 (chief, workers, parameter servers, evaluators), each with a
// machine type from the server's catalog (vCPUs, memory, bundled GPUs and hourly price shown),
// accelerators, replicas and boot disk, and the hourly price of the whole cluster.
import { MachineCatalog, MachineTypeInfo } from '../api';
import { fmtUsd, h } from '../util';
import { checkboxField, fieldId, inputField, selectField } from './fields';
import { CreateForm, POOL_ROLES, PoolForm } from './model';

const DISK_TYPES: [string, string][] = [['pd-ssd', 'SSD persistent disk'], ['pd-standard', 'Standard persistent disk']];

export function machineLine(m: MachineTypeInfo): string {
  const gpu = m.bundledAccelerator ? ` · ${m.bundledAccelerator.acceleratorCount}× ${m.bundledAccelerator.acceleratorType}` : '';
  return `${m.name} · ${m.vcpus} vCPU · ${+m.memoryGib.toFixed(2)} GiB${gpu} · ${fmtUsd(m.usdPerHourWithAccelerators ?? undefined)}/h`;
}

// One replica's hourly price: the machine plus its accelerators (the catalog's prices);
// undefined where the catalog has no price for one of them.
export function replicaUsd(catalog: MachineCatalog, p: PoolForm): number | undefined {
  const m = catalog.machineTypes.find((x) => x.name === p.machineType);
  const a = catalog.acceleratorTypes.find((x) => x.name === p.acceleratorType);
  if (m?.usdPerHour === null || (a && p.acceleratorCount > 0 && a.usdPerHour === null)) return undefined;
  return (m?.usdPerHour ?? 0) + (a && a.usdPerHour !== null ? a.usdPerHour * p.acceleratorCount : 0);
}

const times = (usd: number | undefined, n: number) => (usd === undefined ? undefined : usd * n);

export function clusterUsd(catalog: MachineCatalog, f: CreateForm): number | undefined {
  return f.pools.reduce<number | undefined>((sum, p, i) => {
    if (!(p.enabled || i === 0)) return sum;
    const pool = times(replicaUsd(catalog, p), p.replicaCount);
    return sum === undefined || pool === undefined ? undefined : sum + pool;
  }, 0);
}

function machineSelect(catalog: MachineCatalog, p: PoolForm, path: string, changed: () => void): HTMLElement {
  const id = fieldId();
  const families = [...new Set(catalog.machineTypes.map((m) => m.family))];
  const select = h('select', { id, name: id, 'data-field': path },
    ...families.map((fam) => h('optgroup', { label: fam },
      ...catalog.machineTypes.filter((m) => m.family === fam).map((m) =>
        h('option', { value: m.name, text: machineLine(m), selected: m.name === p.machineType }))))) as HTMLSelectElement;
  select.addEventListener('change', () => {
    p.machineType = select.value;
    const m = catalog.machineTypes.find((x) => x.name === select.value);
    // Accelerator-optimized types come with their GPUs: the request names them, as Vertex wants.
    if (m?.bundledAccelerator) {
      p.acceleratorType = m.bundledAccelerator.acceleratorType;
      p.acceleratorCount = m.bundledAccelerator.acceleratorCount;
    } else if (catalog.machineTypes.find((x) => x.bundledAccelerator?.acceleratorType === p.acceleratorType && x.bundledAccelerator)) {
      p.acceleratorType = '';
      p.acceleratorCount = 0;
    }
    changed();
  });
  return h('div.field', {}, h('label', { for: id, text: 'Machine type' }), select,
    h('div.field-error', { role: 'alert', hidden: true }));
}

function poolBody(catalog: MachineCatalog, f: CreateForm, i: number, rerender: () => void,
  reprice: () => void): HTMLElement[] {
  const p = f.pools[i];
  const at = `spec.workerPoolSpecs[${i}]`;
  const m = catalog.machineTypes.find((x) => x.name === p.machineType);
  const accelerators: [string, string][] = [['', 'None'], ...catalog.acceleratorTypes.map(
    (a): [string, string] => [a.name, `${a.name} · ${+a.memoryGib.toFixed(0)} GiB · ${fmtUsd(a.usdPerHour ?? undefined)}/h each`])];
  const bundled = !!m?.bundledAccelerator;
  return [
    machineSelect(catalog, p, `${at}.machineSpec.machineType`, rerender),
    h('div.facts', { 'data-pool-facts': i, text: m
      ? `${m.vcpus} vCPU${m.vcpus === 1 ? '' : 's'}, ${+m.memoryGib.toFixed(2)} GiB memory${bundled ? `, includes ${m.bundledAccelerator!.acceleratorCount}× ${m.bundledAccelerator!.acceleratorType}` : ''}`
      : 'not in the catalog' }),
    h('div.row', {},
      selectField('Accelerator type', accelerators, () => p.acceleratorType, (v) => {
        p.acceleratorType = v;
        if (v && !p.acceleratorCount) p.acceleratorCount = 1;
        if (!v) p.acceleratorCount = 0;
        rerender();
      }, { path: `${at}.machineSpec.acceleratorType`, hint: bundled ? 'Comes with this machine type' : undefined }),
      inputField('Accelerator count', () => p.acceleratorCount, (v) => { p.acceleratorCount = Number(v); reprice(); },
        { path: `${at}.machineSpec.acceleratorCount`, type: 'number', min: 0, max: 16 })),
    h('div.row', {},
      i === 0
        // Vertex runs exactly one chief: more replicas belong in worker pool 1.
        ? inputField('Replica count', () => 1, () => { /* fixed */ }, { path: `${at}.replicaCount`, type: 'number',
          min: 1, max: 1, readonly: true, hint: 'The chief is always 1 replica; add workers in worker pool 1' })
        : inputField('Replica count', () => p.replicaCount, (v) => { p.replicaCount = Number(v); reprice(); },
          { path: `${at}.replicaCount`, type: 'number', min: 1 }),
      selectField('Disk type', DISK_TYPES, () => p.bootDiskType, (v) => { p.bootDiskType = v; },
        { path: `${at}.diskSpec.bootDiskType` }),
      inputField('Disk size (GB)', () => p.bootDiskSizeGb, (v) => { p.bootDiskSizeGb = Number(v); },
        { path: `${at}.diskSpec.bootDiskSizeGb`, type: 'number', min: 100, max: 64000 })),
    h('div.price', { 'data-pool-price': i, text: poolPrice(catalog, p) }),
  ];
}

const poolPrice = (catalog: MachineCatalog, p: PoolForm) =>
  `${p.replicaCount} × ${fmtUsd(replicaUsd(catalog, p))}/h = ${fmtUsd(times(replicaUsd(catalog, p), p.replicaCount))}/h`;

// The pools editor; `changed` runs after every edit that changes the price.
export function poolsSection(catalog: MachineCatalog, f: CreateForm, changed: () => void): HTMLElement {
  const box = h('div.pools');
  const total = h('p.total');
  // Prices change with counts (text only, so the field being typed in keeps its focus); the pools
  // are drawn again when their shape changes (a pool enabled, a machine or accelerator type).
  const reprice = () => {
    f.pools.forEach((p, i) => {
      const el = box.querySelector(`[data-pool-price="${i}"]`);
      if (el) el.textContent = poolPrice(catalog, p);
    });
    const replicas = f.pools.reduce((n, p, i) => n + (p.enabled || i === 0 ? p.replicaCount : 0), 0);
    total.replaceChildren(h('b', { 'data-total': '', text: `Estimated ${fmtUsd(clusterUsd(catalog, f))} per hour for ${replicas === 1 ? 'the 1 replica' : `all ${replicas} replicas`}` }),
      h('span.sub', { text: ` (${catalog.priceNote})` }));
    changed();
  };
  const render = () => {
    box.replaceChildren(...f.pools.map((p, i) => h(`fieldset.pool${p.enabled || i === 0 ? '' : '.off'}`, { 'data-pool': i },
      h('legend', { text: `Worker pool ${i} — ${POOL_ROLES[i]}` }),
      i === 0 ? null : checkboxField(`Use worker pool ${i} (${POOL_ROLES[i]})`, () => p.enabled, (v) => { p.enabled = v; render(); }),
      ...(p.enabled || i === 0 ? poolBody(catalog, f, i, render, reprice) : []))));
    reprice();
  };
  render();
  return h('div', {}, box, total);
}
