import { Logger } from '@aws-lambda-powertools/logger';
import { APP_NAME } from '../config';

/**
 * The one logger every function shares: JSON lines with the Lambda request id. Request ids,
 * routes and token ids go in keys; tokens, Authorization headers and request bodies never do.
 * POWERTOOLS_LOG_LEVEL sets the level (the tests silence it).
 */
export const logger = new Logger({ serviceName: APP_NAME });
