package io.queenvertx.dashboard;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The browser of a dashboard test class: a {@code static Browser} field carrying this annotation is opened on the
 * class's {@link NodeFixture} node before its first test (after every {@code @BeforeAll}, so fixtures made there are
 * in place) and closed after the class.
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(BrowserFixture.Extension.class)
@interface BrowserFixture {
  /** Opens and closes the browsers of the annotated static fields of a test class. */
  final class Extension implements BeforeEachCallback, AfterAllCallback {
    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
      for (Field f : fields(context, BrowserFixture.class)) {
        if (f.get(null) == null) f.set(null, Browser.open(node(context).baseUrl()));
      }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
      for (Field f : fields(context, BrowserFixture.class)) {
        if (f.get(null) instanceof Browser b) b.close();
        f.set(null, null);
      }
    }

    private static TestNode node(ExtensionContext context) throws IllegalAccessException {
      List<Field> nodes = fields(context, NodeFixture.class);
      if (nodes.size() != 1 || !(nodes.get(0).get(null) instanceof TestNode n)) {
        throw new IllegalStateException("@BrowserFixture needs exactly one started @NodeFixture node in the class");
      }
      return n;
    }

    private static List<Field> fields(ExtensionContext context, Class<? extends java.lang.annotation.Annotation> a) {
      List<Field> fields = AnnotationSupport.findAnnotatedFields(context.getRequiredTestClass(), a);
      for (Field f : fields) {
        if (!Modifier.isStatic(f.getModifiers())) throw new IllegalStateException(a.getSimpleName() + " on " + f);
        f.setAccessible(true);
      }
      return fields;
    }
  }
}
