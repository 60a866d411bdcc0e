package io.queenvertx.boot;

import io.queenvertx.tenancy.OwnershipGate;
import io.vertx.sqlclient.Pool;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.metrics.BrokerMetrics;
import java.util.Optional;

/**
 * What every verticle of a node is handed at deployment: the configuration, the node's PostgreSQL pool, the tenant
 * ownership gate, the maintenance switches, the encryption key and the metrics.
 */
public record NodeContext(Config config, Pool pool, OwnershipGate gate, MaintenanceFlags maintenance,
                          Optional<EnvelopeCipher> cipher, BrokerMetrics metrics) {}
