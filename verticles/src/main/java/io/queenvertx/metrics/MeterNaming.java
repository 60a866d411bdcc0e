package io.queenvertx.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Series names of the JVM binders that {@code promtool check metrics} refuses, fixed in the node's registry before
 * any meter registers: counters in non-base units ({@code jvm_compilation_time_ms_total},
 * {@code process_cpu_time_ns_total}) are replaced by the same counts in seconds
 * ({@code jvm_compilation_time_seconds_total}, {@code process_cpu_time_seconds_total}), and the gauge
 * {@code system_cpu_count}, whose {@code _count} suffix belongs to summaries and histograms, is named
 * {@code system_cpus}.
 */
public final class MeterNaming {
  private MeterNaming() {}

  public static PrometheusMeterRegistry apply(PrometheusMeterRegistry registry) {
    registry.config()
        .meterFilter(MeterFilter.deny(id -> id.getName().equals("jvm.compilation.time")
            && "ms".equals(id.getBaseUnit())))
        .meterFilter(MeterFilter.deny(id -> id.getName().equals("process.cpu.time") && "ns".equals(id.getBaseUnit())))
        .meterFilter(new MeterFilter() {
          @Override
          public Meter.Id map(Meter.Id id) {
            return id.getName().equals("system.cpu.count") ? id.withName("system.cpus") : id;
          }
        });
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit != null && jit.isCompilationTimeMonitoringSupported()) {
      FunctionCounter.builder("jvm.compilation.time", jit, j -> j.getTotalCompilationTime() / 1000.0)
          .description("time the JIT compiler spent compiling").baseUnit("seconds")
          .tag("compiler", jit.getName()).register(registry);
    }
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      FunctionCounter.builder("process.cpu.time", os, o -> o.getProcessCpuTime() / 1e9)
          .description("CPU time used by the process").baseUnit("seconds").register(registry);
    }
    return registry;
  }
}
