package io.queenvertx.consumer;

import java.util.Set;
import java.util.UUID;

/**
 * A fetch's long poll ({@code POST /api/v1/fetch} with {@code maxWaitMs}): wait until one of {@code queues} of
 * {@code tenant} lands, or until the safety re-poll is due ({@code emptyChecks}: the waits of this fetch before this
 * one, on the pop's schedule {@code POP_WAIT_*}), never past {@code deadline} (epoch ms). Parked on the pop's long-poll gates, so the one
 * cluster-wide {@code landed} subscription wakes both.
 */
public record LandingWatch(UUID tenant, Set<String> queues, long deadline, int emptyChecks) {}
