import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** Bench candidate "no tracing", the floor: the tracer's API, doing nothing. */
export type InvocationTrace = undefined;
export const openInvocationTrace = (_functionName: string, _route: string): InvocationTrace => undefined;
export const closeInvocationTrace = (_trace: InvocationTrace, _outcome: string, _status?: number): void => {};
export const traceDynamoDbCalls = <C extends DynamoDBClient>(client: C): C => client;
