import { UsageError, type Values } from './command';

/**
 * The trust commands' options as an operator types them: an audience, claim names and
 * `--claim NAME=VALUE` pins, each refused with the fault in words before anything is written. The
 * issuer's rule is the verifier's too (shared/workload-identity/trust.ts, issuerFault).
 */
const MAX_AUDIENCE_LENGTH = 256;
/** A JWT claim name the way the issuers we know name them: `terraform_run_id`, `repository_owner`, `https://…/claims/x` excluded. */
const CLAIM_NAME = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;
const MAX_CLAIM_VALUE_LENGTH = 512;

export function audienceFault(audience: string): string | undefined {
  if (audience.length === 0 || audience.length > MAX_AUDIENCE_LENGTH)
    return `the audience must be 1 to ${MAX_AUDIENCE_LENGTH} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\x00-\x1f\x7f]/.test(audience)) return 'the audience must hold no control characters';
  return undefined;
}

export function claimNameFault(name: string): string | undefined {
  return CLAIM_NAME.test(name)
    ? undefined
    : `a claim name must be a letter or _ then up to 127 letters, digits, or _ . : - (not ${JSON.stringify(name)})`;
}

/** `NAME=VALUE` → [name, value], or the fault. The value may hold `=`; it is compared as a string. */
export function parseClaimPin(pin: string): [string, string] | string {
  const at = pin.indexOf('=');
  if (at <= 0) return `--claim takes NAME=VALUE, not ${JSON.stringify(pin)}`;
  const [name, value] = [pin.slice(0, at), pin.slice(at + 1)];
  const fault = claimNameFault(name);
  if (fault) return fault;
  if (value.length === 0 || value.length > MAX_CLAIM_VALUE_LENGTH)
    return `the value of claim ${name} must be 1 to ${MAX_CLAIM_VALUE_LENGTH} characters`;
  return [name, value];
}

/** Every value a repeatable flag was given. */
const all = (values: Values, name: string): string[] =>
  [values[name] ?? []].flat().filter((v): v is string => typeof v === 'string');

/** `--claim NAME=VALUE`s as pins, or the first fault. */
export function claimPins(values: Values): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const pin of all(values, 'claim')) {
    const parsed = parseClaimPin(pin);
    if (typeof parsed === 'string') throw new UsageError(parsed);
    const [name, value] = parsed;
    if (Object.hasOwn(pins, name)) throw new UsageError(`--claim ${name} is given twice`);
    pins[name] = value;
  }
  return pins;
}
