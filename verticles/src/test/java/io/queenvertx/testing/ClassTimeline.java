package io.queenvertx.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Where the wall time of a test run goes: one line per test class, {@code <start ms> <end ms> <class>} (epoch
 * milliseconds), appended to {@code target/test-timeline/jvm-<pid>.txt} by the Surefire fork that ran it, so a run's
 * per-fork wall time, idle tail and slowest classes can be read afterwards. Registered in
 * {@code META-INF/services/org.junit.platform.launcher.TestExecutionListener}.
 */
public final class ClassTimeline implements TestExecutionListener {
  private final Map<String, Long> started = new ConcurrentHashMap<>();

  @Override
  public void executionStarted(TestIdentifier id) {
    if (isClass(id)) started.put(id.getUniqueId(), System.currentTimeMillis());
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    Long t0 = started.remove(id.getUniqueId());
    if (t0 == null) return;
    String cls = ((ClassSource) id.getSource().orElseThrow()).getClassName();
    Path file = Path.of("target", "test-timeline", "jvm-" + ProcessHandle.current().pid() + ".txt");
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, t0 + " " + System.currentTimeMillis() + " " + cls + "\n", StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      // a diagnostic only: a test run does not fail for want of its timeline
    }
  }

  private static boolean isClass(TestIdentifier id) {
    return id.isContainer() && id.getSource().filter(ClassSource.class::isInstance).isPresent()
        && id.getParentId().map(p -> !p.contains("[class:")).orElse(true);
  }
}
