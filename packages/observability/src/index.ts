export {
  createLogger,
  REDACT_PATHS,
  scrubText,
  serializeHeaders,
  type LogFormat,
  type LoggerOptions,
} from './logger.js';
export {
  requestIdOf,
  requestLog,
  type RequestLogOptions,
  type RequestLogState,
} from './request-log.js';
export {
  createAppMetrics,
  RECENT_MINUTES,
  RECENT_RESPONSES,
  UNMATCHED_ROUTE,
  type AppMetrics,
} from './metrics.js';
export {
  createReadinessCheck,
  readinessEndpoint,
  READINESS_RETRY_AFTER,
  type ReadinessProbe,
  type ReadinessReport,
} from './readiness.js';
export { drainOnClose, type DrainOptions, type ServerDrain } from './graceful-close.js';
export { startingHandler } from './starting.js';
export { ESCAPED_ERROR_LIMIT, ESCAPED_ERROR_WINDOW_MS, guardRequests } from './request-guard.js';
export { createHttpServer, isClientFailure, logAppErrors } from './http-server.js';
export { containsNul, refuseNul, type RefuseNulOptions } from './refuse-nul.js';
export { indexRoutesByFirstSegment, routePaths } from './route-index.js';
export { bodyFailure, bodyFailureOf, type BodyFailure } from './body-errors.js';
export {
  parseEnvironment,
  portVariable,
  processSettingsOf,
  processVariables,
  proxyVariables,
  tokenVariables,
  webOriginOf,
  webVariables,
  type ProcessSettings,
} from './environment.js';
export {
  ConfigError,
  EX_CONFIG,
  EX_SOFTWARE,
  exitOnConfigError,
  runServices,
  SHUTDOWN_GRACE_MS,
  StartupError,
  type RunningService,
  type ServiceDependency,
  type ServiceStarter,
} from './lifecycle.js';
export {
  ERROR_CODES,
  type ErrorBody,
  type ErrorCode,
  type ErrorCodeInfo,
  type ErrorCodeOf,
  type ErrorService,
  type FieldErrors,
} from './error-codes.js';
export {
  MIN_SECRET_LENGTH,
  placeholderSecrets,
  type SecretProblem,
} from './placeholder-secrets.js';
export { constantTimeEqual } from './constant-time.js';
export {
  addFieldError,
  collectZodIssues,
  fieldErrors,
  toFieldErrors,
  type FieldMap,
  type FieldNaming,
} from './field-errors.js';
