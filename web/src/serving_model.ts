// Requests of the serving pages (no DOM: unit-tested in web/test/console_unit_test.mjs): the
// deploy form's :deployModel body, and the test prediction's body checked before it is sent.

export interface DeployForm {
  endpoint: string;          // an endpoint's name, '' = create one named endpointName
  endpointName: string;
  displayName: string;       // the deployed model's; '' = the model's display name
  machineType: string;
  minReplicaCount: number;
  maxReplicaCount: number;
}

// The :deployModel body: the new deployed model ("0" in the split) takes all the traffic.
export function deployRequestOf(model: string, modelDisplayName: string, f: DeployForm): Record<string, unknown> {
  return {
    deployedModel: {
      model,
      displayName: f.displayName.trim() || modelDisplayName,
      dedicatedResources: {
        machineSpec: { machineType: f.machineType },
        minReplicaCount: f.minReplicaCount,
        maxReplicaCount: Math.max(f.maxReplicaCount, f.minReplicaCount),
      },
    },
    trafficSplit: { 0: 100 },
  };
}

export const SAMPLE_PREDICT_BODY = '{"instances": ["a great movie"]}';

// The test box's text as a PredictRequest, or why it is not one.
export function predictBodyOf(text: string): { body?: Record<string, unknown>; problem?: string } {
  let v: unknown;
  try { v = JSON.parse(text); } catch (e) { return { problem: `not JSON: ${(e as Error).message}` }; }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { problem: 'a PredictRequest is a JSON object: {"instances": [...]}' };
  if (!Array.isArray((v as Record<string, unknown>).instances)) return { problem: '"instances" must be a list' };
  return { body: v as Record<string, unknown> };
}
