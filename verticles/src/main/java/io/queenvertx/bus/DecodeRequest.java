package io.queenvertx.bus;

import java.util.UUID;

/**
 * Decode frames {@code [from, from+count)} of the segment at (partitionId, baseOffset). {@code blob} is the stored
 * segment when the caller already has it (pop), or null to have the decoder fetch it. {@code count} -1 means every
 * frame from {@code from}.
 */
public record DecodeRequest(UUID partitionId, long baseOffset, byte[] blob, int from, int count) {}
