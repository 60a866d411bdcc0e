package io.queenvertx.node;

import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.MaintenanceFlags;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.db.Database;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.kernel.OwnershipGate;
import java.util.Optional;

/**
 * What the verticles and routes of a node are handed: the configuration, the node's database (its procedure facades
 * and stores; never a pool), the tenant ownership gate, the maintenance switches, the encryption key and the metrics.
 */
public record NodeContext(Config config, Database db, OwnershipGate gate, MaintenanceFlags maintenance,
                          Optional<EnvelopeCipher> cipher, BrokerMetrics metrics) {}
