import { forbidden } from '../errors.js';
import type { ApiKey } from '../tenants/service.js';

/**
 * The `caller_id` rule of variant B's list endpoints: it must be the key owner's tenant id, else 403
 * "unauthorized caller". Returns the id as the `user_id` text the answers carry.
 */
export function checkCaller(key: ApiKey, callerId: number): string {
  if (callerId !== key.tenantId) throw forbidden('unauthorized caller');
  return String(key.tenantId);
}
