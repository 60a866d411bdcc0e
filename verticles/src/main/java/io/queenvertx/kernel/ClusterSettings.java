package io.queenvertx.kernel;

import java.nio.file.Path;

/**
 * Clustering: a clustered node joins a Vert.x cluster on Hazelcast ({@link ClusterConfig} builds Hazelcast's
 * configuration from these).
 *
 * @param enabled {@code QUEEN_CLUSTER} (on when {@code QUEEN_CLUSTER_MEMBERS} is set, else off)
 * @param members {@code QUEEN_CLUSTER_MEMBERS} ("127.0.0.1"): comma-separated TCP-IP seed members
 * @param port {@code QUEEN_CLUSTER_PORT} (5701, 1..65535): Hazelcast's port (auto-incremented over 20 ports)
 * @param busPort {@code QUEEN_CLUSTER_BUS_PORT} (0: a free port; 0..65535): TCP port of the clustered event bus
 * @param networkInterface {@code QUEEN_CLUSTER_INTERFACE} (empty: every interface): the only interface Hazelcast
 *     listens on, and the event bus's host (127.0.0.1 when empty)
 * @param name {@code QUEEN_CLUSTER_NAME} ("queen-vertx"): Hazelcast cluster name
 * @param xmlFile {@code QUEEN_CLUSTER_CONFIG} ("cluster.xml"): Hazelcast file, else the copy packaged in the jar
 */
public record ClusterSettings(boolean enabled, String members, int port, int busPort, String networkInterface,
                              String name, Path xmlFile) {
  public static final String DEFAULT_MEMBERS = "127.0.0.1";
  public static final int DEFAULT_PORT = 5701;
  public static final String DEFAULT_NAME = "queen-vertx";
  public static final String DEFAULT_XML_FILE = "cluster.xml";

  static ClusterSettings from(ConfigReader e) {
    String members = e.str("QUEEN_CLUSTER_MEMBERS", "");
    return new ClusterSettings(
        e.bool("QUEEN_CLUSTER", !members.isEmpty()),
        members.isEmpty() ? DEFAULT_MEMBERS : members,
        e.integer("QUEEN_CLUSTER_PORT", DEFAULT_PORT, 1, 65535),
        e.integer("QUEEN_CLUSTER_BUS_PORT", 0, 0, 65535),
        e.str("QUEEN_CLUSTER_INTERFACE", ""),
        e.str("QUEEN_CLUSTER_NAME", DEFAULT_NAME),
        Path.of(e.str("QUEEN_CLUSTER_CONFIG", DEFAULT_XML_FILE)));
  }
}
