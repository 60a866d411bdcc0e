package io.queenvertx.bus;

import java.util.List;
import java.util.UUID;

/** A single ack or an ack batch, answered with one result per item in request order. */
public record AckCommand(UUID tenant, List<AckItem> items) {}
