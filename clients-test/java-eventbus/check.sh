#!/usr/bin/env bash
# Checks that the README's event-bus client example ("Clustering and the event-bus API") compiles against the
# shared-codec jar as a user gets it: `mvn install` of shared-codec (and its parent pom) into the local Maven
# repository, then a separate project that depends on io.queenvertx:shared-codec:<project version> only through
# that repository. The Java block is cut from README.md itself, so the check follows the README.
# Usage: clients-test/java-eventbus/check.sh   (QUEEN_SKIP_INSTALL=1 reuses what is already installed)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/clients-test/java-eventbus/target"
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$root/pom.xml" | head -1)
vertx=$(sed -n 's:.*<vertx.version>\(.*\)</vertx.version>.*:\1:p' "$root/pom.xml" | head -1)
[ -n "$version" ] && [ -n "$vertx" ] || { echo "check.sh: cannot read the versions from $root/pom.xml" >&2; exit 1; }

if [ "${QUEEN_SKIP_INSTALL:-}" != 1 ]; then
  (cd "$root" && mvn -B -ntp -q -Dstyle.color=never -pl shared-codec -am install -DskipTests)
fi

rm -rf "$work" && mkdir -p "$work/src/main/java/example"
# the first ```java block after the section heading, up to its closing fence
snippet=$(awk '/^## Clustering and the event-bus API/{s=1} s&&/^```java/{b=1;next} b&&/^```/{exit} b{print}' "$root/README.md")
[ -n "$snippet" ] || { echo "check.sh: no java block under 'Clustering and the event-bus API' in README.md" >&2; exit 1; }

cat > "$work/src/main/java/example/EventBusClient.java" <<JAVA
package example;

import io.queenvertx.codec.api.*;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.List;

/** The README's event-bus example, verbatim, inside a method. */
public final class EventBusClient {
  public static void main(String[] args) throws Exception {
    com.hazelcast.config.Config hzConfig = new com.hazelcast.config.Config();
    String token = args.length > 0 ? args[0] : "";
$snippet
  }
}
JAVA

cat > "$work/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>queen-event-bus-client</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>io.vertx</groupId>
        <artifactId>vertx-stack-depchain</artifactId>
        <version>$vertx</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>io.queenvertx</groupId>
      <artifactId>shared-codec</artifactId>
      <version>$version</version>
    </dependency>
    <dependency>
      <groupId>io.vertx</groupId>
      <artifactId>vertx-core</artifactId>
    </dependency>
    <dependency>
      <groupId>io.vertx</groupId>
      <artifactId>vertx-hazelcast</artifactId>
    </dependency>
  </dependencies>
  <build>
    <pluginManagement>
      <plugins>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-compiler-plugin</artifactId>
          <version>3.13.0</version>
        </plugin>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-resources-plugin</artifactId>
          <version>3.3.1</version>
        </plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
POM

(cd "$work" && mvn -B -ntp -q -Dstyle.color=never compile)
echo "check.sh: the README's event-bus example compiles against io.queenvertx:shared-codec:$version"
