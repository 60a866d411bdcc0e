package io.queenvertx.bus;

import java.util.UUID;

/** {@code POST /api/v1/lease/:leaseId/extend}: renew every live lease of a worker id by {@code seconds}. */
public record LeaseCommand(UUID tenant, String leaseId, int seconds) {}
