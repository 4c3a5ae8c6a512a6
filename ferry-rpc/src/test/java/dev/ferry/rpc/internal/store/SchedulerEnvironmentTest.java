package dev.ferry.rpc.internal.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ferry.rpc.RpcException;
import dev.ferry.rpc.store.Rendezvous;
import dev.ferry.rpc.store.RendezvousResult;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Slurm's and Kubernetes' variables mapped onto env:// rendezvous, and Slurm's host lists. */
class SchedulerEnvironmentTest {

    @Test
    void slurmTasksBecomeRanksWithTheFirstNodeAsMaster() {
        Map<String, String> env = SchedulerEnvironment.withRendezvousVariables(Map.of(
                "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
                "SLURM_JOB_NODELIST", "gpu[07-10],cpu3"));
        assertThat(env).containsEntry("RANK", "5").containsEntry("WORLD_SIZE", "8").containsEntry("LOCAL_RANK", "1")
                .containsEntry("MASTER_ADDR", "gpu07").containsEntry("MASTER_PORT", "29500");
    }

    @Test
    void variablesSetExplicitlyWin() {
        Map<String, String> env = SchedulerEnvironment.withRendezvousVariables(Map.of(
                "SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_NODELIST", "n[1-2]",
                "MASTER_ADDR", "10.0.0.9", "MASTER_PORT", "31000", "WORLD_SIZE", "4"));
        assertThat(env).containsEntry("RANK", "5").containsEntry("WORLD_SIZE", "4")
                .containsEntry("MASTER_ADDR", "10.0.0.9").containsEntry("MASTER_PORT", "31000");
    }

    @Test
    void anIndexedJobsCompletionIndexIsTheRank() {
        Map<String, String> env = SchedulerEnvironment.withRendezvousVariables(Map.of(
                "JOB_COMPLETION_INDEX", "3", "WORLD_SIZE", "4", "MASTER_ADDR", "train-0.train"));
        assertThat(env).containsEntry("RANK", "3").containsEntry("WORLD_SIZE", "4")
                .containsEntry("MASTER_ADDR", "train-0.train").doesNotContainKey("MASTER_PORT");
        assertThat(SchedulerEnvironment.withRendezvousVariables(Map.of("PATH", "/bin"))).isEqualTo(Map.of("PATH", "/bin"));
    }

    @Test
    void slurmHostListsExpandAsScontrolDoes() {
        assertThat(SlurmHostList.expand("node[01-04,07]")).containsExactly("node01", "node02", "node03", "node04", "node07");
        assertThat(SlurmHostList.expand("gpu1,cpu[8-10]")).containsExactly("gpu1", "cpu8", "cpu9", "cpu10");
        assertThat(SlurmHostList.expand("rack[1-2]-n[1-2]")).containsExactly("rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2");
        assertThat(SlurmHostList.expand("a[8-10]b")).containsExactly("a8b", "a9b", "a10b");
        assertThat(SlurmHostList.expand("solo")).containsExactly("solo");
        assertThat(SlurmHostList.first("node[098-101],login")).isEqualTo("node098");
        for (String bad : new String[] {"node[1-", "node]1[", "node[a-b]", "node[3-1]", "a,,b", "n[1-2-3]"}) {
            assertThatThrownBy(() -> SlurmHostList.expand(bad)).as(bad).isInstanceOfSatisfying(RpcException.class,
                    e -> assertThat(e.getMessage()).startsWith("Malformed Slurm host list '" + bad + "'"));
        }
        assertThatThrownBy(() -> SlurmHostList.expand("n[0-999999999]"))
                .hasMessageContaining("more than " + SlurmHostList.MAX_HOSTS + " hosts");
    }

    @Test
    void envRendezvousUnderSlurmNeedsNoOtherVariable() {
        Map<String, String> srun = Map.of("SLURM_PROCID", "0", "SLURM_NTASKS", "1", "SLURM_LOCALID", "0",
                "SLURM_JOB_NODELIST", "127.0.0.1", "MASTER_PORT", "0");
        try (RendezvousResult joined = Rendezvous.builder().environment(srun).timeout(Duration.ofSeconds(10))
                .build().connect()) {
            assertThat(joined.rank()).isZero();
            assertThat(joined.worldSize()).isEqualTo(1);
            assertThat(joined.server()).isPresent();
        }
    }
}
