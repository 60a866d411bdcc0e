package io.queenvertx.testing;

import com.hazelcast.config.XmlConfigBuilder;
import io.queenvertx.kernel.Config;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.InputStream;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.transform.OutputKeys;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;
import org.w3c.dom.Element;

/**
 * Two Hazelcast-clustered broker nodes in this JVM on loopback, started at once and returned once each sees the
 * other, and the settings every clustered test node uses (in this JVM or in a {@link BrokerProcess}).
 *
 * <p>Those settings name the shipped {@code cluster.xml} with only its join waits shortened
 * ({@link #clusterXml()}): a TCP-IP connection timeout of 1 s instead of 5 and no 5 s pause before joining. With the
 * shipped values two members starting together need about eleven seconds to meet on loopback; with these, two.
 */
public record TestCluster(TestNode a, TestNode b) implements AutoCloseable {
  private static Path clusterXml;

  /**
   * The settings of a member of cluster {@code name} that finds the others by TCP-IP on 127.0.0.1 from Hazelcast
   * port {@code port} on (each test class its own, so two classes in two test JVMs never meet).
   */
  public static Map<String, String> settings(String name, int port) {
    return Map.of("QUEEN_CLUSTER", "true", "QUEEN_CLUSTER_NAME", name, "QUEEN_CLUSTER_MEMBERS", "127.0.0.1",
        "QUEEN_CLUSTER_PORT", Integer.toString(port), "QUEEN_CLUSTER_CONFIG", clusterXml().toString());
  }

  /**
   * Starts node a with {@code envA} and node b with {@code envB} (each over {@link #settings}, which the caller
   * includes) at the same time on {@code db}, and waits until both see exactly two members.
   */
  public static TestCluster start(Map<String, String> envA, Map<String, String> envB, Config.Database db)
      throws Exception {
    var fa = CompletableFuture.supplyAsync(() -> TestNode.start(envA, db));
    var fb = CompletableFuture.supplyAsync(() -> TestNode.start(envB, db));
    TestNode a = null;
    TestNode b = null;
    try {
      a = fa.get(180, TimeUnit.SECONDS);
      b = fb.get(180, TimeUnit.SECONDS);
      TestNode.awaitMembers(2, a, b);
      return new TestCluster(a, b);
    } catch (Exception | Error e) {
      if (a != null) a.close();
      if (b != null) b.close();
      throw e;
    }
  }

  /** Both nodes on {@code env} (over {@link #settings}) and the shared test database. */
  public static TestCluster start(Map<String, String> env) throws Exception {
    return start(env, env, TestDatabase.get().shared());
  }

  /** {@code env} with {@code name=value} added (e.g. a server id per node). */
  public static Map<String, String> with(Map<String, String> env, String name, String value) {
    var m = new HashMap<>(env);
    m.put(name, value);
    return m;
  }

  /**
   * A clustered Vert.x with no broker on it, joined to cluster {@code name} (Hazelcast port {@code port}, the same
   * {@link #clusterXml()}): an event-bus client, or a member nothing answers on. The caller closes it.
   */
  public static Vertx bareMember(String name, int port) throws Exception {
    com.hazelcast.config.Config hz;
    try (InputStream in = Files.newInputStream(clusterXml())) {
      hz = new XmlConfigBuilder(in).build();
    }
    hz.setClusterName(name);
    hz.getNetworkConfig().setPort(port).setPortAutoIncrement(true).setPortCount(20);
    var join = hz.getNetworkConfig().getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    join.getTcpIpConfig().setEnabled(true).getMembers().clear();
    join.getTcpIpConfig().addMember("127.0.0.1");
    var options = new VertxOptions();
    options.getEventBusOptions().setHost("127.0.0.1").setPort(0);
    return Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(hz)).buildClustered()
        .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /**
   * The shipped {@code cluster.xml} (the copy on the classpath) with {@code connection-timeout-seconds="1"} on its
   * {@code tcp-ip} join and {@code hazelcast.wait.seconds.before.join} 1, written once per test JVM.
   */
  public static synchronized Path clusterXml() {
    if (clusterXml == null) clusterXml = writeClusterXml();
    return clusterXml;
  }

  private static Path writeClusterXml() {
    try (InputStream in = TestCluster.class.getResourceAsStream("/cluster.xml")) {
      if (in == null) throw new IllegalStateException("no cluster.xml on the test classpath");
      var factory = DocumentBuilderFactory.newInstance();
      factory.setNamespaceAware(true);
      var doc = factory.newDocumentBuilder().parse(in);
      String ns = doc.getDocumentElement().getNamespaceURI();
      var tcpIp = doc.getElementsByTagNameNS(ns, "tcp-ip");
      if (tcpIp.getLength() != 1) throw new IllegalStateException("cluster.xml has no single <tcp-ip> join");
      ((Element) tcpIp.item(0)).setAttribute("connection-timeout-seconds", "1");
      var properties = doc.getElementsByTagNameNS(ns, "properties");
      Element props;
      if (properties.getLength() == 0) {
        props = doc.createElementNS(ns, "properties");
        doc.getDocumentElement().insertBefore(props, doc.getDocumentElement().getFirstChild());
      } else {
        props = (Element) properties.item(0);
      }
      Element wait = doc.createElementNS(ns, "property");
      wait.setAttribute("name", "hazelcast.wait.seconds.before.join");
      wait.setTextContent("1");
      props.appendChild(wait);
      var out = new StringWriter();
      var transformer = TransformerFactory.newInstance().newTransformer();
      transformer.setOutputProperty(OutputKeys.ENCODING, "UTF-8");
      transformer.transform(new DOMSource(doc), new StreamResult(out));
      Path file = Files.createTempFile("queen-test-cluster", ".xml");
      file.toFile().deleteOnExit();
      Files.writeString(file, out.toString());
      return file;
    } catch (Exception e) {
      throw new IllegalStateException("could not write the tests' cluster.xml", e);
    }
  }

  /** Closes b, then a. */
  @Override
  public void close() {
    b.close();
    a.close();
  }
}
