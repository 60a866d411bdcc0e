package io.queenvertx.boot;

import io.vertx.sqlclient.Pool;

/** What every verticle of a node is handed at deployment: the configuration and the node's PostgreSQL pool. */
public record NodeContext(Config config, Pool pool) {}
