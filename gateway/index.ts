// Public surface of the model gateway (issue 34): the server a host starts (the driver in-process on loopback for
// `tcab run`, a Deployment in the chart), the provider table, and the tokens (whoever holds the signing key mints:
// the driver, or the dispatcher for a cluster's gateway).
export { startGateway } from './server.ts';
export type { BudgetExceededEvent, Gateway, GatewayLogger, GatewayOptions, SampleEvent } from './server.ts';
export { DEFAULT_PROVIDERS, keysFromEnv, providerConfigs } from './providers.ts';
export type { CredentialPlace, KeyHeader, ProviderConfig, ProviderRoute } from './providers.ts';
export { claimsFor, mintToken, newSigningKey, signingKeyFrom, TOKEN_PREFIX } from './token.ts';
export { REQUEST_OUTCOMES } from './metrics.ts';
