package io.queenvertx.boot;

import io.queenvertx.kernel.BootException;
import io.queenvertx.kernel.Config;
import io.queenvertx.kernel.ConfigException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code java -jar verticles/target/queen-vertx.jar}: one node, configured from the environment.
 *
 * <p>Exit codes: 2 when a setting is not accepted ({@link ConfigException}, reported before anything starts), the
 * HTTP port is already in use (checked before PostgreSQL starts) or the data folder is held by another live node
 * ({@link DataFolderLock}; that node is left alone); 1 for any other boot failure (e.g. PostgreSQL unreachable past
 * {@code QUEEN_DB_CONNECT_TIMEOUT_S}). A known failure is one log line without a stack trace.
 */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    Logger log = LoggerFactory.getLogger(Main.class);
    Config config;
    try {
      config = Config.fromEnvironment();
    } catch (ConfigException e) {
      log.error("boot failed: {}", e.getMessage());
      System.exit(2);
      return;
    }
    Node node;
    try {
      node = Node.start(config);
    } catch (ConfigException e) {
      log.error("boot failed: {}", e.getMessage());
      System.exit(2);
      return;
    } catch (BootException e) {
      log.error("boot failed: {}", e.getMessage());
      System.exit(e.exitCode());
      return;
    } catch (Exception e) {
      log.error("boot failed: {}", e.getMessage(), e);
      System.exit(1);
      return;
    }
    // SIGTERM/SIGINT: drain HTTP, then stop the embedded database.
    Runtime.getRuntime().addShutdownHook(new Thread(node::close, "queen-shutdown"));
  }
}
