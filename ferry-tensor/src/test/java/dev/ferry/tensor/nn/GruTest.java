package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;

import static dev.ferry.tensor.nn.NnKnownValuesTest.assertValues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** GRU against literals printed by PyTorch 1.13 for the same seeds. */
class GruTest {

    @Test
    void initForwardAndGradientsMatchTorch() {
        // torch.manual_seed(0); gru = nn.GRU(2, 3, num_layers=2)
        GRU gru = new GRU(2, 3, 2, 0, false, new Generator(0));
        assertThat(gru.namedParameters().keySet()).containsExactly("weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                "bias_hh_l0", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1");
        var p = gru.namedParameters();
        assertThat(p.get("weight_ih_l0").shape()).containsExactly(9, 2);
        assertValues(p.get("weight_ih_l0"), 0, -0.004322517663240433, 0.3097158372402191, -0.4751853346824646,
                -0.4248946011066437, -0.2223689705133438, 0.15482072532176971,
                -0.011439144611358643, 0.45777493715286255, -0.05123639851808548,
                0.1527741253376007, -0.1744827926158905, -0.11348707973957062, -0.55157071352005,
                -0.3823687434196472, -0.2379971146583557, 0.021387115120887756,
                0.22824688255786896, 0.34642332792282104);
        assertValues(p.get("bias_hh_l1"), 0, -0.14452800154685974, -0.281235009431839, -0.20197638869285583,
                -0.47320878505706787, -0.12281114608049393, 0.12341234087944031,
                -0.37612393498420715, -0.029629245400428772, 0.4132966697216034);

        // g = torch.Generator().manual_seed(1); x = torch.randn(4, 2, 2, generator=g); h0 = torch.randn(2, 2, 3, ...)
        Generator g = new Generator(1);
        Tensor x = Tensors.randn(g, 4, 2, 2);
        Tensor h0 = Tensors.randn(g, 2, 2, 3);
        assertValues(h0, 0, -1.0276086330413818, -0.563052773475647, -0.8922905325889587, -0.05825017765164375,
                -0.19550958275794983, -0.9656359553337097, 0.4224153161048889, 0.267316997051239,
                -0.4211951494216919, -0.510699987411499, -1.5726652145385742, -0.12324775755405426);
        GRU.Result r = gru.forward(x, h0);
        assertThat(r.output().shape()).containsExactly(4, 2, 3);
        assertValues(r.output(), 1e-6, 0.5203083753585815, -0.0415709912776947, -0.14159908890724182, 0.462105393409729,
                -1.2518144845962524, 0.0006528794765472412, 0.6073952317237854,
                -0.18368209898471832, 0.0038787275552749634, 0.725013017654419,
                -0.9115469455718994, 0.1604909896850586, 0.6340717077255249, -0.25488245487213135,
                0.07140252739191055, 0.749780535697937, -0.6170467734336853, 0.2550906538963318,
                0.4885101020336151, -0.31734657287597656, 0.058479830622673035, 0.602128267288208,
                -0.42102789878845215, 0.23285198211669922);
        assertValues(r.hidden(), 1e-6, 0.34919118881225586, 0.46437183022499084, 0.04488226771354675, 0.4470648765563965,
                0.5304784178733826, -0.19728580117225647, 0.4885101020336151, -0.31734657287597656,
                0.058479830622673035, 0.602128267288208, -0.42102789878845215, 0.23285198211669922);

        // (out.pow(2).sum() + hn.sum()).backward()
        r.output().pow(2).sum().add(r.hidden().sum()).backward();
        assertValues(p.get("weight_ih_l0").grad(), 1e-5, -0.004602693021297455, 0.07799743115901947, -0.15000876784324646,
                0.037413857877254486, 0.0006641563377343118, -0.007625206373631954,
                0.5993566513061523, 0.8668379783630371, 0.6500723361968994, 0.563772439956665,
                -0.2998307943344116, -0.4676363468170166, -0.4946540296077728, 1.4715759754180908,
                -1.3799527883529663, 0.06737440079450607, 0.8619371652603149, 1.2689188718795776);
        assertValues(p.get("weight_hh_l1").grad(), 1e-5, -0.3412797451019287, 0.33300238847732544, -0.015986304730176926,
                -0.052960559725761414, 0.28951504826545715, -0.0014751660637557507,
                0.32612788677215576, -0.24847008287906647, 0.08146283030509949,
                0.16497427225112915, 0.5621641874313354, 0.10765618085861206, -0.15548211336135864,
                -2.641417980194092, -0.050897806882858276, -0.04216019809246063,
                0.05898987874388695, -0.038055311888456345, 1.7221342325210571,
                -1.3604199886322021, -0.0059039294719696045, -0.1397724747657776,
                1.6836234331130981, 0.08130136877298355, 0.7178594470024109, -0.5493571162223816,
                0.19890663027763367);
        assertValues(p.get("bias_hh_l0").grad(), 1e-5, 0.07946564257144928, 0.40387535095214844, -0.014848493039608002,
                -0.256252646446228, -0.6224513053894043, 0.332430362701416, 1.1878374814987183,
                1.6280336380004883, -0.4537178874015808);
    }

    @Test
    void batchFirstZeroStateAndUnbatchedMatchTorch() {
        // torch.manual_seed(3); g2 = nn.GRU(3, 2, batch_first=True); g2(xb) and g2(xb[0])
        GRU gru = new GRU(3, 2, 1, 0, true, new Generator(3));
        Tensor xb = Tensors.randn(new Generator(4), 2, 3, 3);
        GRU.Result r = gru.forward(xb, null);
        assertValues(r.output(), 1e-6, -0.18796151876449585, -0.564437985420227, -0.35730215907096863,
                -0.6432167291641235, -0.5226839184761047, -0.7084465026855469,
                -0.34407609701156616, -0.10201902687549591, -0.11669935286045074,
                -0.6019097566604614, 0.11953465640544891, -0.8831425905227661);
        assertValues(r.hidden(), 1e-6, -0.5226839184761047, -0.7084465026855469, 0.11953465640544891, -0.8831425905227661);
        GRU.Result u = gru.forward(xb.get(0), null);
        assertThat(u.output().shape()).containsExactly(3, 2);
        assertThat(u.hidden().shape()).containsExactly(1, 2);
        assertValues(u.output(), 1e-6, -0.18796151876449585, -0.564437985420227, -0.35730215907096863,
                -0.6432167291641235, -0.5226839184761047, -0.7084465026855469);
        assertValues(u.hidden(), 1e-6, -0.5226839184761047, -0.7084465026855469);
        assertThat(gru.forward(xb.get(0)).allclose(u.output())).isTrue();
    }

    @Test
    void cellIsOneStepOfTheLayer() {
        GRU gru = new GRU(3, 2, 1, 0, false, new Generator(3));
        var p = gru.namedParameters();
        Tensor x = Tensors.randn(new Generator(5), 1, 4, 3);
        Tensor h = Tensors.randn(new Generator(6), 1, 4, 2);
        Tensor step = GRU.cell(x.get(0), h.get(0), p.get("weight_ih_l0"), p.get("weight_hh_l0"),
                p.get("bias_ih_l0"), p.get("bias_hh_l0"));
        assertThat(step.allclose(gru.forward(x, h).hidden().get(0))).isTrue();
    }

    @Test
    void dropoutOnlyBetweenLayersInTrainingAndShapeChecks() {
        GRU gru = new GRU(2, 4, 3, 0.5, false, new Generator(0));
        assertThat(gru.toString()).isEqualTo("GRU(2, 4, num_layers=3, dropout=0.5)");
        Tensor x = Tensors.randn(new Generator(1), 5, 3, 2);
        assertThat(gru.forward(x).equal(gru.forward(x))).isFalse(); // fresh masks each call
        gru.eval();
        assertThat(gru.forward(x).equal(gru.forward(x))).isTrue();
        // Carrying a detached state over keeps the values but cuts the graph (truncated BPTT).
        Tensor h = gru.forward(x, null).hidden().detach();
        assertThat(h.requiresGrad()).isFalse();
        assertThat(gru.forward(x, h).output().requiresGrad()).isTrue();
        assertThatThrownBy(() -> gru.forward(x, Tensors.zeros(3, 3, 5)))
                .hasMessage("Expected hidden size [3, 3, 4], got [3, 3, 5]");
        assertThatThrownBy(() -> gru.forward(Tensors.zeros(5, 3, 7)))
                .hasMessage("input.size(-1) must be equal to input_size. Expected 2, got 7");
        assertThatThrownBy(() -> gru.forward(Tensors.zeros(5)))
                .hasMessage("GRU: Expected input to be 2-D or 3-D but received 1-D tensor");
        assertThatThrownBy(() -> new GRU(0, 4)).hasMessageContaining("input_size=0");
        assertThat(gru.parameters()).allMatch(t -> t instanceof Parameter);
    }
}
