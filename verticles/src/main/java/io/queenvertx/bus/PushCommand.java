package io.queenvertx.bus;

import java.util.List;
import java.util.UUID;

/** A push request handed to the log writer; {@code producerSub} is the JWT subject or null (never the body's). */
public record PushCommand(UUID tenant, String producerSub, List<PushItem> items) {}
