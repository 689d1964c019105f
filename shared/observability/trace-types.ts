/**
 * The spans the tracer records (tracer.ts) and its exporter sends (xray-daemon-exporter.ts), in a
 * module of their own: both import them, and neither imports the other's types back.
 */

/** One DynamoDB call as recorded: what X-Ray shows of it, and nothing of its items. */
export interface DynamoDbSpan {
  id: string;
  /** The API operation: GetItem, Query, PutItem… */
  operation: string;
  /** The table(s) the call names; several only for a multi-table batch. */
  tables: string[];
  /** Epoch seconds, microsecond precision. */
  start: number;
  end: number;
  /** DynamoDB's HTTP status, when it answered. */
  status: number | undefined;
  /** The error's name (ConditionalCheckFailedException…), never its message or items. */
  error: string | undefined;
  retries: number;
  requestId: string | undefined;
}

/** One invocation: its span under Lambda's, annotated with route and outcome. */
export interface InvocationSpan {
  traceId: string;
  /** Lambda's segment for this invocation (`Parent` of the header). */
  parentId: string | undefined;
  id: string;
  /** `## <function>`: the route table's function name. */
  name: string;
  start: number;
  end: number;
  /** `trust` and `workload`: the trust ids and `sub` of an accepted workload identity token (authorizer only). */
  annotations: { route: string; outcome?: string; trust?: string; workload?: string };
  /** The status answered (5xx a fault, 4xx an error), when there is one. */
  status: number | undefined;
  calls: DynamoDbSpan[];
}
