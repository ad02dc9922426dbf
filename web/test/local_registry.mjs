// A loopback Docker registry with the busybox image in it, for browser tests that create jobs
// running a real container, as tools/trainyard/container_e2e_test.cc does: the registry of
// scripts/registry-local.sh (its own dir and trust file, so /etc/containers is never touched) and
// the image built FROM scratch by scripts/build-images.sh in a private podman storage, then
// pushed; the server pulls it into another private storage.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const onPath = (p) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0;

// Why containers cannot run here, or '' when they can.
export function containersMissing() {
  const missing = ['podman', 'runc', 'docker-registry'].filter((p) => !onPath(p));
  if (!fs.existsSync('/bin/busybox')) missing.push('busybox-static');
  if (missing.length) return `missing ${missing.join(', ')} (scripts/install-deps.sh --test)`;
  if (process.getuid && process.getuid() !== 0) return 'not root (rootful podman; docs/containers.md)';
  return '';
}

function run(cmd, env, log) {
  const r = spawnSync('bash', ['-c', cmd], { env: { ...process.env, ...env }, encoding: 'utf8' });
  fs.appendFileSync(log, `$ ${cmd}\n${r.stdout}${r.stderr}\n`);
  if (r.status !== 0) {
    const last = `${r.stdout}${r.stderr}`.trim().split('\n').pop() ?? '';
    throw new Error(`${cmd} failed (${r.status}): ${last.slice(0, 300)}; see ${log}`);
  }
  return r.stdout;
}

// Starts the registry under `dir`, builds and pushes trainyard/busybox. Returns the image, the
// server's extra flags and env, and stop() (registry down, private storages emptied).
export function startRegistryWithBusybox(sourceDir, dir) {
  const log = path.join(dir, 'registry-setup.log');
  const regEnv = { REGISTRY_LOCAL_DIR: path.join(dir, 'registry'), REGISTRIES_CONF_D: path.join(dir, 'conf.d') };
  run(`${sourceDir}/scripts/registry-local.sh start`, regEnv, log);
  const registry = `127.0.0.1:${fs.readFileSync(path.join(dir, 'registry', 'port'), 'utf8').trim()}`;
  const conf = path.join(dir, 'registries.conf');
  fs.writeFileSync(conf, `[[registry]]\nlocation = "${registry}"\ninsecure = true\n`);
  const storage = (name) => `podman --root ${path.join(dir, name, 'storage')} --runroot ${path.join(dir, name, 'run')}`;
  const env = { CONTAINERS_REGISTRIES_CONF: conf, TRAINYARD_REGISTRY: registry };
  const stopRegistry = () =>
    spawnSync('bash', ['-c', `${sourceDir}/scripts/registry-local.sh stop`], { env: { ...process.env, ...regEnv } });
  try {
    run(`${sourceDir}/scripts/build-images.sh busybox`, { ...env, PODMAN: storage('build') }, log);
  } catch (e) {
    // A host where podman cannot build (a chroot): nothing left running or mounted (the failed
    // build leaves its storage's overlay mount, which would keep the test dir from being removed).
    const root = path.join(dir, 'build');
    spawnSync('bash', ['-c', `${storage('build')} system reset --force; umount -l ${root}/storage/overlay`]);
    stopRegistry();
    throw e;
  }
  return {
    image: `${registry}/trainyard/busybox:latest`,
    serverArgs: ['--podman-storage', path.join(dir, 'server')],
    env,
    stop() {
      for (const name of ['build', 'server']) {
        spawnSync('bash', ['-c', `${storage(name)} rm --all --force --time 0; ${storage(name)} rmi --all --force`]);
      }
      stopRegistry();
    },
  };
}
