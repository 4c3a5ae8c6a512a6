package dev.ferry.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;

/** Supplies {@code ferry --version}: Ferry's version (filtered from the pom) and the running JVM. */
final class FerryVersion implements CommandLine.IVersionProvider {

  @Override
  public String[] getVersion() throws IOException {
    Properties properties = new Properties();
    try (InputStream in = FerryVersion.class.getResourceAsStream("version.properties")) {
      if (in != null) {
        properties.load(in);
      }
    }
    return new String[] {
        "ferry " + properties.getProperty("version", "(unknown version)"),
        "JVM: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
            + " (" + System.getProperty("java.home") + ")"
    };
  }
}
