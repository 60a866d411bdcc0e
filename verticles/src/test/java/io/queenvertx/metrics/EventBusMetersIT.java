package io.queenvertx.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queenvertx.http.server.RequestMetersFactory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;
import io.vertx.micrometer.VertxPrometheusOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The event-bus series of the node's metrics factory are vertx-micrometer's own: the same traffic (requests, publishes,
 * sends nobody handles, failed replies) gives the same exposition (names, help, labels, counts, pending gauges), and
 * the cached meters are what the node's default options get.
 */
class EventBusMetersIT {
  /** The node's options (boot.Node), with a registry name of its own (one backend per name per JVM). */
  private static MicrometerMetricsOptions options() {
    return new MicrometerMetricsOptions().setEnabled(true).setRegistryName("eb-meters-" + UUID.randomUUID())
        .setPrometheusOptions(new VertxPrometheusOptions().setEnabled(true));
  }

  @Test
  void defaultOptionsGetTheCachedMetersAndADisabledDomainGetsNone() {
    var registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    var metrics = new RequestMetersFactory(registry).metrics(new VertxOptions().setMetricsOptions(options()));
    assertThat(metrics.createEventBusMetrics()).isInstanceOf(EventBusMeters.class);
    metrics.close();
    var off = new RequestMetersFactory(registry).metrics(new VertxOptions()
        .setMetricsOptions(options().addDisabledMetricsCategory(MetricsDomain.EVENT_BUS)));
    assertThat(off.createEventBusMetrics()).isNull();
    off.close();
  }

  @Test
  void sameTrafficGivesTheSameEventBusSeriesAsVertxMicrometer() throws Exception {
    // the node's labels: the event-bus series carry only their side
    var theirs = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    var ours = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    String a = trafficAndScrape(new MicrometerMetricsFactory(theirs), theirs, options());
    String b = trafficAndScrape(new RequestMetersFactory(ours), ours, options());
    assertThat(a).contains("vertx_eventbus_sent_total{side=\"local\"} 8.0",
        "vertx_eventbus_published_total{side=\"local\"} 3.0",
        "vertx_eventbus_received_total{side=\"local\"} 11.0",
        "vertx_eventbus_delivered_total{side=\"local\"} 9.0",
        "vertx_eventbus_pending{side=\"local\"} 0.0");
    assertThat(b).isEqualTo(a);
  }

  @Test
  void withAddressAndFailureLabelsTheSeriesAreStillVertxMicrometers() throws Exception {
    var labels = EnumSet.of(Label.EB_ADDRESS, Label.EB_SIDE, Label.EB_FAILURE, Label.HTTP_METHOD, Label.HTTP_CODE);
    var theirs = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    var ours = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    String a = trafficAndScrape(new MicrometerMetricsFactory(theirs), theirs, options().setLabels(labels));
    String b = trafficAndScrape(new RequestMetersFactory(ours), ours, options().setLabels(labels));
    assertThat(a).contains("vertx_eventbus_sent_total{address=\"echo\",side=\"local\"} 5.0",
        "vertx_eventbus_published_total{address=\"news\",side=\"local\"} 3.0",
        "vertx_eventbus_delivered_total{address=\"news\",side=\"local\"} 3.0",
        "vertx_eventbus_received_total{address=\"nobody\",side=\"local\"} 2.0",
        "vertx_eventbus_pending{address=\"echo\",side=\"local\"} 0.0",
        "vertx_eventbus_reply_failures_total{address=\"nobody\",failure=\"NO_HANDLERS\"} 2.0");
    assertThat(b).isEqualTo(a);
  }

  /** Sends a fixed mix of event-bus traffic and answers the event-bus series once every message was handled. */
  private static String trafficAndScrape(VertxMetricsFactory factory, PrometheusMeterRegistry registry,
      MicrometerMetricsOptions options) throws Exception {
    Vertx vertx = Vertx.builder().with(new VertxOptions().setMetricsOptions(options)).withMetrics(factory).build();
    try {
      var bus = vertx.eventBus();
      List<Future<?>> ready = new ArrayList<>();
      ready.add(bus.<String>consumer("echo", m -> m.reply(m.body())).completion());
      ready.add(bus.<String>consumer("news", m -> { }).completion());
      ready.add(bus.<String>consumer("refuse", m -> m.fail(409, "no")).completion());
      Future.all(ready).await(10, TimeUnit.SECONDS);
      var opts = new DeliveryOptions().setSendTimeout(10_000);
      List<Future<?>> replies = new ArrayList<>();
      for (int i = 0; i < 5; i++) replies.add(bus.request("echo", "x" + i, opts));
      for (int i = 0; i < 2; i++) replies.add(bus.request("nobody", "y", opts).otherwiseEmpty());
      for (int i = 0; i < 3; i++) bus.publish("news", "z" + i);
      replies.add(bus.request("refuse", "w", opts).otherwiseEmpty());
      Future.join(replies).await(10, TimeUnit.SECONDS);
      // 5 echo requests, 1 refused one and 3 publishes are processed; nothing is left pending
      await().atMost(Duration.ofSeconds(10)).until(() -> total(registry, "vertx_eventbus_processed_total") == 9
          && total(registry, "vertx_eventbus_pending") == 0);
      return series(registry);
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }

  /** The sum of every sample of {@code name}, whatever its labels. */
  private static double total(PrometheusMeterRegistry registry, String name) {
    return registry.scrape().lines().filter(l -> l.startsWith(name + "{") || l.startsWith(name + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }

  private static String series(PrometheusMeterRegistry registry) {
    return registry.scrape().lines()
        .filter(l -> l.startsWith("vertx_eventbus") || l.startsWith("# HELP vertx_eventbus")
            || l.startsWith("# TYPE vertx_eventbus"))
        .sorted()
        .collect(Collectors.joining("\n"));
  }
}
