package io.queenvertx.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import org.junit.jupiter.api.Test;

/**
 * Issue 34 item 12, pages: no other site may frame the dashboard or the API docs (clickjacking), and no browser may
 * sniff one of their files into another type. Every page says so twice ({@code X-Frame-Options: DENY} and CSP
 * {@code frame-ancestors 'none'}); every page and static file carries {@code X-Content-Type-Options: nosniff}.
 */
class FramingHeadersIT {
  @NodeFixture
  static TestNode node;

  @Test
  void pagesRefuseFramingAndFilesRefuseSniffing() {
    for (String page : new String[] {"/", "/some/client-side/route", "/docs", "/docs/index.html"}) {
      TestNode.Reply r = node.get(page);
      assertThat(r.status()).as(page).isEqualTo(200);
      assertThat(r.header("content-type")).as(page).startsWith("text/html");
      assertThat(r.header("x-frame-options")).as(page).isEqualTo("DENY");
      assertThat(r.header("content-security-policy")).as(page).contains("frame-ancestors 'none'");
      assertThat(r.header("x-content-type-options")).as(page).isEqualTo("nosniff");
    }
    for (String file : new String[] {"/assets/app.js", "/assets/style.css", "/docs/queen-docs.js",
        "/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"}) {
      TestNode.Reply r = node.get(file);
      assertThat(r.status()).as(file).isEqualTo(200);
      assertThat(r.header("x-content-type-options")).as(file).isEqualTo("nosniff");
      assertThat(r.header("x-frame-options")).as(file).isEqualTo("DENY");
    }
  }
}
