package dev.ferry.rpc.internal.text;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void durationsReadAsAPersonWritesThem() {
        assertThat(Durations.describe(Duration.ZERO)).isEqualTo("0 ms");
        assertThat(Durations.describe(Duration.ofNanos(250_000))).isEqualTo("250 µs");
        assertThat(Durations.describe(Duration.ofMillis(100))).isEqualTo("100 ms");
        assertThat(Durations.describe(Duration.ofMillis(1_500))).isEqualTo("1.5 s");
        assertThat(Durations.describe(Duration.ofMillis(1_234))).isEqualTo("1.234 s");
        assertThat(Durations.describe(Duration.ofSeconds(60))).isEqualTo("1 min");
        assertThat(Durations.describe(Duration.ofSeconds(59))).isEqualTo("59 s");
        assertThat(Durations.describe(Duration.ofSeconds(150))).isEqualTo("2 min 30 s");
        assertThat(Durations.describe(Duration.ofHours(2))).isEqualTo("120 min");
        assertThat(Durations.describe(Duration.ofMillis(-5))).isEqualTo("-5 ms");
    }
}
