package dev.ferry.rpc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs a test's probe class in a JVM of its own (this JVM's java and class path), for what only a
 * fresh JVM shows: whether something got started or loaded at all.
 */
final class FreshJvm {
    private FreshJvm() {
    }

    /**
     * Runs {@code main} with {@code jvmOptions} and {@code args}, its output in {@code log}; asserts it
     * exits 0 within 45 s and returns its output.
     */
    static String run(Path log, List<String> jvmOptions, Class<?> main, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        assertThat(child.waitFor(45, TimeUnit.SECONDS)).as("probe exits").isTrue();
        String output = Files.readString(log);
        assertThat(child.exitValue()).as(output).isZero();
        return output;
    }
}
