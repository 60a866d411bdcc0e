package io.queenvertx.bus;

/**
 * One validated message of a push: {@code payload} is the JSON text of the item's payload, kept verbatim;
 * {@code transactionId} is null when the client sent none (the message id is used then).
 */
public record PushItem(String queue, String partition, String transactionId, byte[] payload) {}
