package io.queenvertx.boot;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code java -jar verticles/target/queen-vertx.jar}: one node, configured from the environment. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    Logger log = LoggerFactory.getLogger(Main.class);
    Node node;
    try {
      node = Node.start(Config.fromEnvironment());
    } catch (Exception e) {
      log.error("boot failed: {}", e.getMessage(), e);
      System.exit(1);
      return;
    }
    // SIGTERM/SIGINT: drain HTTP, then stop the embedded database.
    Runtime.getRuntime().addShutdownHook(new Thread(node::close, "queen-shutdown"));
  }
}
