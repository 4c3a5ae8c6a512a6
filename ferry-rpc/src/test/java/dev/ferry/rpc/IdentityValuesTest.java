package dev.ferry.rpc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** WorkerInfo and GloballyUniqueId are values: equal exactly when every component is. */
class IdentityValuesTest {

    @Test
    void workerInfosAreEqualWhenNameAndIdAre() {
        WorkerInfo a = new WorkerInfo("worker1", 1);
        assertThat(a).isEqualTo(new WorkerInfo(new String("worker1"), 1)).hasSameHashCodeAs(new WorkerInfo("worker1", 1));
        assertThat(a).isNotEqualTo(new WorkerInfo("worker1", 2)).isNotEqualTo(new WorkerInfo("worker2", 1))
                .isNotEqualTo("worker1").isNotEqualTo(null);
    }

    @Test
    void globallyUniqueIdsAreEqualWhenCreatorAndLocalIdAre() {
        GloballyUniqueId a = new GloballyUniqueId(3, 1L << 40);
        assertThat(a).isEqualTo(new GloballyUniqueId(3, 1L << 40)).hasSameHashCodeAs(new GloballyUniqueId(3, 1L << 40));
        assertThat(a).isNotEqualTo(new GloballyUniqueId(4, 1L << 40)).isNotEqualTo(new GloballyUniqueId(3, 1))
                .isNotEqualTo(null);
    }
}
