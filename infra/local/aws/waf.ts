import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { HttpRequest, HttpResponse } from './apigateway';
import type { Stack } from './cloudformation';

/**
 * The local stand-in for AWS WAF: the web ACL associated with the stage, read from the template,
 * its rules evaluated in priority order as WAF does. A statement kind, field or transformation
 * this module does not implement stops the start with one line naming it, so no rule is skipped
 * unnoticed. Managed rule groups are the exception: their rules are AWS's, not in the template,
 * and are passed through unevaluated (README: "What the local stack emulates").
 */
export interface WafRequest {
  method: string;
  /** The URI path as sent. */
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Raw header pairs as received. */
  rawHeaders: string[];
  body: Buffer;
  sourceIp: string;
}

export interface WafResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Allowed, or blocked with the rule's custom response (none: API Gateway answers WAF_FILTERED). */
export type WafVerdict = { action: 'allow' } | { action: 'block'; rule: string; response?: WafResponse };

const INSPECTION_LIMITS: Record<string, number> = {
  KB_16: 16 * 1024,
  KB_32: 32 * 1024,
  KB_48: 48 * 1024,
  KB_64: 64 * 1024,
};
const CONTENT_TYPES: Record<string, string> = {
  APPLICATION_JSON: 'application/json',
  TEXT_PLAIN: 'text/plain',
  TEXT_HTML: 'text/html',
};
const STATEMENTS = [
  'RateBasedStatement',
  'SizeConstraintStatement',
  'ByteMatchStatement',
  'AndStatement',
  'OrStatement',
  'NotStatement',
  'ManagedRuleGroupStatement',
];

export class WebAcl {
  readonly name: string;
  /** Managed rule groups present in the web ACL and passed through unevaluated. */
  readonly passedThrough: string[] = [];
  private readonly rules: any[];
  private readonly defaultBlocks: boolean;
  private readonly bodies: Record<string, { ContentType: string; Content: string }>;
  private readonly bodyLimit: number;
  /** Request times per rate-based rule and aggregation key. */
  private readonly windows = new Map<string, number[]>();

  constructor(logicalId: string, properties: any) {
    this.name = logicalId;
    this.rules = [...(properties.Rules ?? [])].sort((a, b) => a.Priority - b.Priority);
    this.defaultBlocks = 'Block' in (properties.DefaultAction ?? {});
    this.bodies = properties.CustomResponseBodies ?? {};
    // WAF: "Body inspection size limits" — API Gateway's default is 16 KB unless raised here.
    this.bodyLimit =
      INSPECTION_LIMITS[properties.AssociationConfig?.RequestBody?.API_GATEWAY?.DefaultSizeInspectionLimit ?? 'KB_16']!;
    for (const rule of this.rules) {
      const action = Object.keys(rule.Action ?? rule.OverrideAction ?? {})[0];
      if (!['Block', 'Allow', 'Count', 'None'].includes(action ?? ''))
        throw new Error(`WAF rule ${rule.Name}: action ${action} is not emulated by the local stack`);
      this.check(rule.Name, rule.Statement);
    }
  }

  /** Every statement, field and transformation must be one this module evaluates. */
  private check(rule: string, statement: any): void {
    const [kind, body] = Object.entries(statement)[0] as [string, any];
    if (!STATEMENTS.includes(kind)) throw new Error(`WAF rule ${rule}: ${kind} is not emulated by the local stack`);
    if (kind === 'ManagedRuleGroupStatement') {
      this.passedThrough.push(`${body.VendorName}/${body.Name}`);
      return;
    }
    for (const child of body.Statements ?? []) this.check(rule, child);
    if (body.Statement) this.check(rule, body.Statement);
    if (body.ScopeDownStatement) this.check(rule, body.ScopeDownStatement);
    if (body.FieldToMatch) fieldReader(rule, body.FieldToMatch);
    for (const t of body.TextTransformations ?? []) transformation(rule, t.Type);
    for (const key of body.CustomKeys ?? []) keyReader(rule, key, body.ForwardedIPConfig);
    if (
      kind === 'RateBasedStatement' &&
      !['IP', 'FORWARDED_IP', 'CUSTOM_KEYS', 'CONSTANT'].includes(body.AggregateKeyType)
    ) {
      throw new Error(`WAF rule ${rule}: aggregate key ${body.AggregateKeyType} is not emulated by the local stack`);
    }
    if (kind === 'RateBasedStatement') {
      // What WAF refuses: a limit under 10, a window but 60, 120, 300 or 600 s
      // (https://docs.aws.amazon.com/waf/latest/developerguide/waf-rule-statement-type-rate-based-high-level-settings.html).
      const limit = Number(body.Limit);
      if (!Number.isInteger(limit) || limit < 10 || limit > 2_000_000_000)
        throw new Error(`WAF rule ${rule}: rate limit ${body.Limit} is refused by WAF (10 to 2,000,000,000)`);
      if (body.EvaluationWindowSec !== undefined && ![60, 120, 300, 600].includes(Number(body.EvaluationWindowSec))) {
        throw new Error(
          `WAF rule ${rule}: evaluation window ${body.EvaluationWindowSec} s is refused by WAF (60, 120, 300 or 600)`,
        );
      }
    }
  }

  /**
   * WAF in front of the stage: undefined when the request may pass, else the answer to a block.
   * API Gateway: "AWS WAF custom responses take precedence over custom gateway responses"; a block
   * without one is the stage's WAF_FILTERED gateway response (`refusal`).
   */
  filter(request: HttpRequest, refusal: () => HttpResponse): HttpResponse | undefined {
    const { url } = request;
    const verdict = this.evaluate({
      method: request.method,
      path: url.split('?')[0]!,
      query: url.includes('?') ? url.slice(url.indexOf('?') + 1) : '',
      rawHeaders: request.rawHeaders,
      body: request.body,
      sourceIp: request.sourceIp,
    });
    if (verdict.action !== 'block') return undefined;
    if (!verdict.response) return refusal();
    // The custom response's headers are static (no X-Request-Id); API Gateway still adds its own request id.
    const headers = { ...verdict.response.headers, 'x-amzn-RequestId': randomUUID() };
    return {
      status: verdict.response.status,
      headers,
      body: Buffer.from(verdict.response.body),
      errorType: 'WAF_FILTERED',
    };
  }

  evaluate(request: WafRequest, now = Date.now()): WafVerdict {
    for (const rule of this.rules) {
      if (!this.matches(rule.Name, rule.Statement, request, now)) continue;
      const [action, settings] = Object.entries(rule.Action ?? rule.OverrideAction)[0] as [string, any];
      if (action === 'Allow') return { action: 'allow' };
      if (action === 'Block')
        return {
          action: 'block',
          rule: rule.Name,
          ...(settings?.CustomResponse ? { response: this.customResponse(settings.CustomResponse) } : {}),
        };
      // Count (and a rule group's None): recorded in metrics only, evaluation goes on.
    }
    return this.defaultBlocks ? { action: 'block', rule: 'DefaultAction' } : { action: 'allow' };
  }

  private matches(rule: string, statement: any, request: WafRequest, now: number): boolean {
    const [kind, s] = Object.entries(statement)[0] as [string, any];
    switch (kind) {
      case 'AndStatement':
        return s.Statements.every((child: any) => this.matches(rule, child, request, now));
      case 'OrStatement':
        return s.Statements.some((child: any) => this.matches(rule, child, request, now));
      case 'NotStatement':
        return !this.matches(rule, s.Statement, request, now);
      case 'ManagedRuleGroupStatement':
        return false; // passed through (see the class comment)
      case 'SizeConstraintStatement': {
        const field = fieldReader(rule, s.FieldToMatch)(request, this.bodyLimit);
        if (field === 'oversize-match') return true;
        if (field === 'oversize-no-match' || field === undefined) return false;
        return compare(s.ComparisonOperator, transform(rule, field, s.TextTransformations).length, s.Size);
      }
      case 'ByteMatchStatement': {
        const field = fieldReader(rule, s.FieldToMatch)(request, this.bodyLimit);
        if (field === 'oversize-match') return true;
        if (field === 'oversize-no-match' || field === undefined) return false;
        return positional(
          s.PositionalConstraint,
          transform(rule, field, s.TextTransformations).toString('latin1'),
          String(s.SearchString),
        );
      }
      case 'RateBasedStatement':
        return this.overRate(rule, s, request, now);
      default:
        throw new Error(`WAF rule ${rule}: ${kind} is not emulated`);
    }
  }

  /**
   * WAF "Rate-based rule statement": requests are counted per aggregation key over the trailing
   * evaluation window (only those the scope-down statement matches); while a key's count is over
   * the limit, the rule matches its requests. A request missing a key component is not counted.
   */
  private overRate(rule: string, s: any, request: WafRequest, now: number): boolean {
    if (s.ScopeDownStatement && !this.matches(rule, s.ScopeDownStatement, request, now)) return false;
    let parts: string[] | 'match' | undefined;
    switch (s.AggregateKeyType) {
      case 'CONSTANT':
        parts = ['constant'];
        break;
      case 'IP':
        parts = [request.sourceIp];
        break;
      case 'FORWARDED_IP':
        parts = forwardedIp(request, s.ForwardedIPConfig);
        break;
      default: {
        const values = (s.CustomKeys as any[]).map((key) => keyReader(rule, key, s.ForwardedIPConfig)(request));
        if (values.includes('match')) parts = 'match';
        else parts = values.some((v) => v === undefined) ? undefined : (values.flat() as string[]);
      }
    }
    if (parts === 'match') return true; // a forwarded-IP fallback of MATCH
    if (parts === undefined) return false;
    const key = `${rule}\0${parts.join('\0')}`;
    const windowStart = now - Number(s.EvaluationWindowSec ?? 300) * 1000;
    const times = (this.windows.get(key) ?? []).filter((t) => t > windowStart);
    times.push(now);
    this.windows.set(key, times);
    return times.length > Number(s.Limit);
  }

  private customResponse(custom: any): WafResponse {
    const headers: Record<string, string> = {};
    let body = '';
    if (custom.CustomResponseBodyKey) {
      const stored = this.bodies[custom.CustomResponseBodyKey];
      if (!stored) throw new Error(`WAF custom response body ${custom.CustomResponseBodyKey} is not defined`);
      headers['Content-Type'] = CONTENT_TYPES[stored.ContentType] ?? 'text/plain';
      body = stored.Content;
    }
    for (const { Name, Value } of custom.ResponseHeaders ?? []) headers[Name] = Value;
    return { status: Number(custom.ResponseCode), headers, body };
  }
}

/** The web ACL associated with the stage (AWS::WAFv2::WebACLAssociation), or none. */
export function webAclOf(stack: Stack): WebAcl | undefined {
  const associations = stack.resourcesOf('AWS::WAFv2::WebACLAssociation');
  if (associations.length === 0) return undefined;
  if (associations.length > 1) throw new Error('The local stack emulates one web ACL association per stage');
  const arn = associations[0]![1].Properties.WebACLArn;
  const logicalId = arn?.['Fn::GetAtt']?.[0] as string | undefined;
  if (!logicalId) throw new Error('The web ACL association does not name a web ACL of this template');
  // Resolved like every template value: a rule's search string may be a reference (the front's secret).
  return new WebAcl(logicalId, stack.resolve(stack.resource(logicalId).Properties));
}

function header(request: WafRequest, name: string): string | undefined {
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() === name.toLowerCase()) return request.rawHeaders[i + 1];
  }
  return undefined;
}

type FieldValue = Buffer | 'oversize-match' | 'oversize-no-match' | undefined;

function fieldReader(rule: string, field: any): (request: WafRequest, bodyLimit: number) => FieldValue {
  const [kind, settings] = Object.entries(field)[0] as [string, any];
  switch (kind) {
    case 'SingleHeader':
      return (r) => {
        const v = header(r, settings.Name);
        return v === undefined ? undefined : Buffer.from(v, 'latin1');
      };
    case 'UriPath':
      return (r) => Buffer.from(r.path, 'latin1');
    case 'QueryString':
      return (r) => Buffer.from(r.query, 'latin1');
    case 'Method':
      return (r) => Buffer.from(r.method, 'latin1');
    case 'Body':
      return (r, limit) => {
        if (r.body.length <= limit) return r.body;
        const handling = settings?.OversizeHandling ?? 'CONTINUE';
        if (handling === 'MATCH') return 'oversize-match';
        if (handling === 'NO_MATCH') return 'oversize-no-match';
        return r.body.subarray(0, limit); // CONTINUE: only the inspected part
      };
    default:
      throw new Error(`WAF rule ${rule}: field ${kind} is not emulated by the local stack`);
  }
}

/** A rate-based custom key's value; undefined when the request lacks it. */
function keyReader(rule: string, key: any, forwarded: any): (request: WafRequest) => string[] | 'match' | undefined {
  const [kind, settings] = Object.entries(key)[0] as [string, any];
  switch (kind) {
    case 'Header':
      return (r) => {
        const value = header(r, settings.Name);
        return value === undefined
          ? undefined
          : [transform(rule, Buffer.from(value, 'latin1'), settings.TextTransformations).toString('latin1')];
      };
    case 'IP':
      return (r) => [r.sourceIp];
    case 'ForwardedIP':
      return (r) => forwardedIp(r, forwarded);
    case 'HTTPMethod':
      return (r) => [r.method];
    case 'UriPath':
      return (r) => [transform(rule, Buffer.from(r.path, 'latin1'), settings.TextTransformations).toString('latin1')];
    default:
      throw new Error(`WAF rule ${rule}: rate-based key ${kind} is not emulated by the local stack`);
  }
}

/**
 * WAF "Forwarded IP address": the first address of the header. A request without the header is
 * not inspected by the rule at all; one whose first address is not valid takes the fallback, MATCH
 * or NO_MATCH (https://docs.aws.amazon.com/waf/latest/APIReference/API_ForwardedIPConfig.html).
 */
function forwardedIp(request: WafRequest, config: any): string[] | 'match' | undefined {
  const value = header(request, config?.HeaderName ?? 'X-Forwarded-For');
  if (value === undefined) return undefined;
  const first = value.split(',')[0]?.trim();
  if (first && isIP(first)) return [first];
  return config?.FallbackBehavior === 'MATCH' ? 'match' : undefined;
}

const TRANSFORMATIONS: Record<string, (value: Buffer) => Buffer> = {
  NONE: (v) => v,
  LOWERCASE: (v) => Buffer.from(v.toString('latin1').toLowerCase(), 'latin1'),
  // WAF: tab, newline, vertical tab, form feed, carriage return and non-breaking space become spaces, runs become one.
  COMPRESS_WHITE_SPACE: (v) => Buffer.from(v.toString('latin1').replace(/[\t\n\v\f\r \xa0]+/g, ' '), 'latin1'),
  URL_DECODE: (v) => {
    try {
      return Buffer.from(decodeURIComponent(v.toString('latin1').replace(/\+/g, ' ')), 'utf8');
    } catch {
      return v;
    }
  },
  BASE64_DECODE: (v) => Buffer.from(v.toString('latin1'), 'base64'),
  HEX_DECODE: (v) => Buffer.from(v.toString('latin1'), 'hex'),
  NORMALIZE_PATH: (v) => Buffer.from(normalizePath(v.toString('latin1')), 'latin1'),
  REMOVE_NULLS: (v) => Buffer.from(v.filter((byte) => byte !== 0)),
  MD5: (v) => createHash('md5').update(v).digest(),
};

/**
 * WAF's NORMALIZE_PATH: "Remove multiple slashes, directory self-references, and directory
 * back-references that are not at the beginning of the input". A path that ended on a removed
 * segment keeps its last slash (`/a/b/..` is `/a/`).
 */
function normalizePath(path: string): string {
  const segments = path.replace(/\/{2,}/g, '/').split('/');
  const kept: string[] = [];
  for (const [i, segment] of segments.entries()) {
    const parent = kept.at(-1);
    const removable =
      segment === '.' ||
      (segment === '..' && parent !== undefined && parent !== '..' && !(kept.length === 1 && parent === ''));
    if (!removable) {
      kept.push(segment);
      continue;
    }
    if (segment === '..') kept.pop();
    if (i === segments.length - 1) kept.push('');
  }
  return kept.join('/');
}

function transformation(rule: string, type: string): (value: Buffer) => Buffer {
  const apply = TRANSFORMATIONS[type];
  if (!apply) throw new Error(`WAF rule ${rule}: text transformation ${type} is not emulated by the local stack`);
  return apply;
}

/** Transformations apply in ascending priority (WAF "Text transformations"). */
function transform(
  rule: string,
  value: Buffer,
  transformations: Array<{ Priority: number; Type: string }> = [],
): Buffer {
  return [...transformations]
    .sort((a, b) => a.Priority - b.Priority)
    .reduce((v, t) => transformation(rule, t.Type)(v), value);
}

function compare(operator: string, size: number, limit: number): boolean {
  switch (operator) {
    case 'EQ':
      return size === limit;
    case 'NE':
      return size !== limit;
    case 'LE':
      return size <= limit;
    case 'LT':
      return size < limit;
    case 'GE':
      return size >= limit;
    case 'GT':
      return size > limit;
    default:
      throw new Error(`WAF size comparison ${operator} is not emulated`);
  }
}

function positional(constraint: string, value: string, search: string): boolean {
  switch (constraint) {
    case 'EXACTLY':
      return value === search;
    case 'STARTS_WITH':
      return value.startsWith(search);
    case 'ENDS_WITH':
      return value.endsWith(search);
    case 'CONTAINS':
      return value.includes(search);
    case 'CONTAINS_WORD':
      return new RegExp(`(^|[^A-Za-z0-9_])${search.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9_])`).test(
        value,
      );
    default:
      throw new Error(`WAF positional constraint ${constraint} is not emulated`);
  }
}
