package io.queenvertx.boot;

import io.queenvertx.tenancy.OwnershipGate;
import io.vertx.sqlclient.Pool;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.metrics.BrokerMetrics;
import io.queenvertx.db.PgServers;
import java.util.Optional;

/**
 * What every verticle of a node is handed at deployment: the configuration, the node's PostgreSQL pool (the writable
 * server), the tenant ownership gate, the maintenance switches, the encryption key, the metrics and the node's
 * PostgreSQL servers ({@code servers.reads()} is the pool of the read-only routes: a read replica when one is
 * configured and fit).
 */
public record NodeContext(Config config, Pool pool, OwnershipGate gate, MaintenanceFlags maintenance,
                          Optional<EnvelopeCipher> cipher, BrokerMetrics metrics, PgServers servers) {
  /** One pool for everything (tests that build a context around a node's pool). */
  public NodeContext(Config config, Pool pool, OwnershipGate gate, MaintenanceFlags maintenance,
                     Optional<EnvelopeCipher> cipher, BrokerMetrics metrics) {
    this(config, pool, gate, maintenance, cipher, metrics, PgServers.single(pool));
  }

  /** The pool of the read-only routes (listings, detail, DLQ listing, status, analytics). */
  public Pool reads() {
    return servers.reads();
  }
}
