import { API_BASE_PATH } from '../config';

/** Terraform's remote service discovery, at the root of the host (Terraform docs, "Remote Service Discovery"). */
export const SERVICE_DISCOVERY_PATH = '/.well-known/terraform.json';

/**
 * What HCP Terraform answers for the API this project serves: the `tfe` services, each at the base
 * path with its trailing slash (the cloud backend reads `tfe.v2`, the tfe provider `tfe.v2.2`).
 * Terraform refuses a discovery answer whose Content-Type is not `application/json`.
 */
export const SERVICE_DISCOVERY_DOCUMENT: Readonly<Record<string, string>> = {
  'tfe.v2': `${API_BASE_PATH}/`,
  'tfe.v2.1': `${API_BASE_PATH}/`,
  'tfe.v2.2': `${API_BASE_PATH}/`,
};

export const SERVICE_DISCOVERY_MEDIA_TYPE = 'application/json';
