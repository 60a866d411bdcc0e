package io.queenvertx.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The one node fixture of the integration tests: a {@code static TestNode} field carrying this annotation is given a
 * node started before the class's {@code @BeforeAll} methods run (so they may use it) and closed after its
 * {@code @AfterAll} methods ran (so those may still clean up through it).
 *
 * <pre>{@code
 * @NodeFixture(env = {"QUEEN_MAX_BODY_BYTES=1024"})
 * static TestNode node;
 * }</pre>
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(NodeFixture.Extension.class)
public @interface NodeFixture {
  /** Settings for the node, each {@code NAME=value}, over {@link TestNode#start(Map)}'s own. */
  String[] env() default {};

  /** Starts the node on a new empty database ({@link TestDatabase#fresh()}) instead of the shared one. */
  boolean freshDatabase() default false;

  /** Starts and closes the nodes of the annotated static fields of a test class. */
  final class Extension implements BeforeAllCallback, AfterAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
      for (Field f : fields(context)) {
        NodeFixture spec = f.getAnnotation(NodeFixture.class);
        Map<String, String> env = new HashMap<>();
        for (String kv : spec.env()) {
          int eq = kv.indexOf('=');
          if (eq <= 0) throw new IllegalArgumentException("@NodeFixture env entry is not NAME=value: " + kv);
          env.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        TestNode node = spec.freshDatabase() ? TestNode.start(env, TestDatabase.get().fresh()) : TestNode.start(env);
        f.setAccessible(true);
        f.set(null, node);
      }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
      for (Field f : fields(context)) {
        f.setAccessible(true);
        if (f.get(null) instanceof TestNode node) {
          node.close();
          f.set(null, null);
        }
      }
    }

    private static List<Field> fields(ExtensionContext context) {
      List<Field> fields = AnnotationSupport.findAnnotatedFields(context.getRequiredTestClass(), NodeFixture.class);
      for (Field f : fields) {
        if (!Modifier.isStatic(f.getModifiers()) || f.getType() != TestNode.class) {
          throw new IllegalStateException("@NodeFixture goes on a static TestNode field, not " + f);
        }
      }
      return fields;
    }
  }
}
