package io.queenvertx.bus;

/**
 * One acknowledgement: {@code status} is already normalised to {@code completed}, {@code failed}, {@code retry} or
 * {@code dlq}; {@code leaseId} and {@code error} are null when absent or empty.
 */
public record AckItem(String transactionId, String partitionId, String status, String leaseId, String error,
                      String consumerGroup) {}
