import type { InfraRunState } from './global-setup-infra';

/** Stops the infra project's template process if it is still at work when the run ends (see global-setup-infra.ts). */
export default function globalTeardownInfra(): void {
  const state = globalThis as InfraRunState;
  const child = state.infraTemplates;
  delete state.infraTemplates;
  if (child && child.exitCode === null && child.signalCode === null) child.kill();
}
