package io.queenvertx.http;

import io.queenvertx.http.server.RequestMeters;
import io.queenvertx.http.server.RequestMetersFactory;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.SocketAddress;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The HTTP request series of {@link RequestMetersFactory} are vertx-micrometer's own: the same traffic through a
 * server metered by each gives the same exposition (names, help, labels, counts, byte sums), and the cached meters are
 * what the node's default options get.
 */
class RequestMetersIT {
  /**
   * The node's options (boot.Node): Prometheus on, default labels; a registry name of its own, since vertx-micrometer
   * keeps one backend per name for the whole JVM.
   */
  private static MicrometerMetricsOptions options() {
    return new MicrometerMetricsOptions().setEnabled(true).setRegistryName("request-meters-" + UUID.randomUUID())
        .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true));
  }

  @Test
  void defaultLabelsGetTheCachedRequestMeters() {
    var vertxOptions = new VertxOptions().setMetricsOptions(options());
    var local = SocketAddress.inetSocketAddress(0, "127.0.0.1");
    var registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    var metrics = new RequestMetersFactory(registry).metrics(vertxOptions);
    assertThat(metrics.createHttpServerMetrics(new HttpServerOptions(), local)).isInstanceOf(RequestMeters.class);
    metrics.close();
    // a path label is per request: left to vertx-micrometer
    var byPath = new VertxOptions().setMetricsOptions(options().addLabels(Label.HTTP_PATH));
    var pathMetrics = new RequestMetersFactory(registry).metrics(byPath);
    assertThat(pathMetrics.createHttpServerMetrics(new HttpServerOptions(), local)).isNotInstanceOf(RequestMeters.class);
    pathMetrics.close();
  }

  @Test
  void sameTrafficGivesTheSameRequestSeriesAsVertxMicrometer() throws Exception {
    var theirs = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    var ours = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    String a = serveAndScrape(new MicrometerMetricsFactory(theirs), theirs);
    String b = serveAndScrape(new RequestMetersFactory(ours), ours);
    assertThat(a).contains("vertx_http_server_requests_total{code=\"201\",method=\"POST\"} 7.0");
    assertThat(a).contains("vertx_http_server_requests_total{code=\"404\",method=\"GET\"} 3.0");
    assertThat(b).isEqualTo(a);
  }

  /** Serves a fixed mix of requests and answers the request series, timings reduced to their counts. */
  private static String serveAndScrape(VertxMetricsFactory factory, PrometheusMeterRegistry registry)
      throws Exception {
    Vertx vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(options())).withMetrics(factory).build();
    try {
      HttpServer server = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(body -> {
        switch (req.path()) {
          case "/created" -> req.response().setStatusCode(201).end("{\"n\":" + body.length() + "}");
          case "/failed" -> req.response().setStatusCode(500).end("{\"error\":\"no\"}");
          default -> req.response().setStatusCode(404).end();
        }
      })).listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      var client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
      String base = "http://127.0.0.1:" + server.actualPort();
      for (int i = 0; i < 7; i++) send(client, HttpRequest.newBuilder(URI.create(base + "/created"))
          .POST(HttpRequest.BodyPublishers.ofString("x".repeat(i * 10))));
      for (int i = 0; i < 3; i++) send(client, HttpRequest.newBuilder(URI.create(base + "/nothing")).GET());
      for (int i = 0; i < 2; i++) send(client, HttpRequest.newBuilder(URI.create(base + "/failed"))
          .method("DELETE", HttpRequest.BodyPublishers.noBody()));
      // the last response's metrics are recorded as it is written: wait for every request to have left the gauge
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(requestSeries(registry)).contains(
          "vertx_http_server_requests_total{code=\"500\",method=\"DELETE\"} 2.0",
          "vertx_http_server_active_requests{method=\"DELETE\"} 0.0"));
      return requestSeries(registry);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private static void send(HttpClient client, HttpRequest.Builder request) throws Exception {
    client.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The per-request series (connection and byte-count series are left out), timings reduced to their counts. */
  private static String requestSeries(PrometheusMeterRegistry registry) {
    List<String> prefixes = List.of("vertx_http_server_requests", "vertx_http_server_request_bytes",
        "vertx_http_server_response_bytes", "vertx_http_server_response_time", "vertx_http_server_active_requests",
        "vertx_http_server_request_resets");
    return registry.scrape().lines()
        .filter(l -> prefixes.stream().anyMatch(p -> l.startsWith(p) || l.startsWith("# HELP " + p)
            || l.startsWith("# TYPE " + p)))
        .filter(l -> !l.startsWith("vertx_http_server_response_time_seconds_sum")
            && !l.startsWith("vertx_http_server_response_time_seconds_max"))
        .sorted()
        .collect(Collectors.joining("\n"));
  }
}
