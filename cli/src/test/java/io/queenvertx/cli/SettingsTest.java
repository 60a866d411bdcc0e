package io.queenvertx.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SettingsTest {
  @TempDir
  Path home;

  @Test
  void flagsBeatEnvironmentWhichBeatsTheConfigFileWhichBeatsDefaults() throws Exception {
    Path dir = Files.createDirectories(home.resolve(".config/qvctl"));
    Files.writeString(dir.resolve("config"), "# comment\nurl=http://file:1/\ntoken = from-file\ntenant=t-file\n");
    Settings fileOnly = Settings.resolve(Map.of(), Map.of(), home.toString());
    assertThat(fileOnly).isEqualTo(new Settings("http://file:1", "from-file", "t-file", "table"));

    Settings env = Settings.resolve(Map.of(), Map.of("QVCTL_URL", "http://env:2", "QVCTL_TOKEN", "from-env",
        "QVCTL_OUTPUT", "json"), home.toString());
    assertThat(env).isEqualTo(new Settings("http://env:2", "from-env", "t-file", "json"));

    Settings flags = Settings.resolve(Map.of("url", "https://flag:3", "tenant", "t-flag", "output", "table"),
        Map.of("QVCTL_URL", "http://env:2", "QVCTL_TENANT", "t-env"), home.toString());
    assertThat(flags).isEqualTo(new Settings("https://flag:3", "from-file", "t-flag", "table"));

    assertThat(Settings.resolve(Map.of(), Map.of(), home.resolve("nobody").toString()))
        .isEqualTo(new Settings(Settings.DEFAULT_URL, null, null, "table"));
  }

  @Test
  void aNamedConfigFileMustExistAndHoldKnownKeys() throws Exception {
    assertThatThrownBy(() -> Settings.resolve(Map.of("config", home.resolve("none").toString()), Map.of(), null))
        .isInstanceOf(Exit.Failure.class).hasMessageContaining("does not exist")
        .matches(e -> ((Exit.Failure) e).code == Exit.USAGE);
    Path bad = Files.writeString(home.resolve("bad"), "url=http://x\npassword=secret\n");
    assertThatThrownBy(() -> Settings.resolve(Map.of(), Map.of("QVCTL_CONFIG", bad.toString()), null))
        .isInstanceOf(Exit.Failure.class).hasMessageContaining("line 2");
    Path xdg = Files.createDirectories(home.resolve("xdg/qvctl"));
    Files.writeString(xdg.resolve("config"), "output=json\n");
    assertThat(Settings.resolve(Map.of(), Map.of("XDG_CONFIG_HOME", home.resolve("xdg").toString()), null).json())
        .isTrue();
  }

  @Test
  void badValuesAreUsageErrors() {
    assertThatThrownBy(() -> Settings.resolve(Map.of("output", "yaml"), Map.of(), home.toString()))
        .hasMessageContaining("table or json");
    assertThatThrownBy(() -> Settings.resolve(Map.of("url", "localhost:6632"), Map.of(), home.toString()))
        .hasMessageContaining("http://");
  }
}
