package dev.ferry.tensor.nn;

import dev.ferry.tensor.Generator;
import dev.ferry.tensor.Parameter;
import dev.ferry.tensor.Tensor;
import dev.ferry.tensor.Tensors;
import org.junit.jupiter.api.Test;

import static dev.ferry.tensor.nn.NnKnownValuesTest.assertValues;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Embedding and LSTM against literals printed by PyTorch 1.13 for the same seeds. */
class RecurrentAndEmbeddingTest {

    @Test
    void embeddingInitLookupAndPaddingGradientMatchTorch() {
        // torch.manual_seed(0); emb = nn.Embedding(5, 3, padding_idx=1)
        Embedding emb = new Embedding(5, 3, 1, new Generator(0));
        assertValues(emb.weight(), 0, 1.5409960746765137, -0.293428897857666, -2.1787893772125244, 0.0, 0.0, 0.0,
                0.40334683656692505, 0.8380263447761536, -0.7192575931549072, -0.40334352850914, -0.5966353416442871,
                0.18203648924827576, -0.8566746115684509, 1.1006041765213013, -1.0711873769760132);
        Tensor idx = Tensors.of(new long[][] {{0, 1, 4}, {4, 4, 2}});
        Tensor out = emb.forward(idx);
        assertThat(out.shape()).containsExactly(2, 3, 3);
        assertThat(out.get(1, 2).equal(emb.weight().get(2))).isTrue();
        Tensor w = Tensors.arange(0.0, 18.0, 1.0).reshape(2, 3, 3).div(10);
        out.mul(w).sum().backward();
        // Row 4 was picked three times (gradients summed); padding row 1 gets none.
        assertValues(emb.weight().grad(), 1e-6, 0.0, 0.10000000149011612, 0.20000000298023224, 0.0, 0.0, 0.0, 1.5,
                1.600000023841858, 1.7000000476837158, 0.0, 0.0, 0.0, 2.700000047683716, 3.0, 3.3000001907348633);
        assertThat(emb.toString()).isEqualTo("Embedding(5, 3, padding_idx=1)");

        // torch.manual_seed(0); nn.Embedding(10, 3): 30 values take PyTorch's vectorised normal fill,
        // whose float32 log/cos differ from Java's in the last bits.
        assertValues(new Embedding(10, 3, null, new Generator(0)).weight(), 1e-6,
                -1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383, 0.8487103581428528,
                0.6920091509819031, -0.31601276993751526, -2.1152193546295166, 0.32227492332458496, -1.2633347511291504,
                0.34998318552970886, 0.30813392996788025, 0.11984150856733322, 1.237657904624939, -0.14347384870052338,
                -0.1116093322634697, -0.6135830879211426, 0.03159274160861969, -0.4926769733428955, 0.2484147548675537,
                0.4396958351135254, 0.11241118609905243, -0.8410648107528687, -2.316041946411133, -0.10230965167284012,
                0.7924439907073975, -0.28966769576072693, 0.05250748619437218, 0.5228604674339294, 2.3022053241729736);
    }

    @Test
    void embeddingRejectsBadInput() {
        Embedding emb = new Embedding(4, 2, null, new Generator(0));
        assertThatThrownBy(() -> emb.forward(Tensors.of(1f, 2f))).hasMessageContaining("'indices'")
                .hasMessageContaining("float32");
        assertThatThrownBy(() -> emb.forward(Tensors.of(4L))).hasMessage("embedding: index 4 is out of range for 4"
                + " embeddings");
        assertThatThrownBy(() -> emb.forward(Tensors.of(-1L))).hasMessageContaining("index -1 is out of range");
        assertThatThrownBy(() -> new Embedding(4, 2, 4, new Generator(0))).hasMessageContaining("Padding_idx");
        assertThat(new Embedding(4, 2, -1, new Generator(0)).paddingIdx()).isEqualTo(3);
    }

    @Test
    void lstmInitForwardAndGradientsMatchTorch() {
        // torch.manual_seed(0); lstm = nn.LSTM(2, 3, num_layers=2)
        LSTM lstm = new LSTM(2, 3, 2, 0, false, new Generator(0));
        assertThat(lstm.namedParameters().keySet()).containsExactly("weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                "bias_hh_l0", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1");
        var p = lstm.namedParameters();
        assertValues(p.get("weight_ih_l0"), 0, -0.004322517663240433, 0.3097158372402191, -0.4751853346824646,
                -0.4248946011066437, -0.2223689705133438, 0.15482072532176971, -0.011439144611358643,
                0.45777493715286255, -0.05123639851808548, 0.1527741253376007, -0.1744827926158905,
                -0.11348707973957062, -0.55157071352005, -0.3823687434196472, -0.2379971146583557,
                0.021387115120887756, 0.22824688255786896, 0.34642332792282104, -0.3914094567298889,
                -0.25141456723213196, 0.2097034901380539, 0.47942468523979187, -0.11881878226995468,
                0.43203797936439514);
        assertValues(p.get("bias_hh_l1"), 0, -0.5196489691734314, -0.03896377608180046, 0.5077330470085144,
                -0.23549655079841614, 0.5213490724563599, 0.20908957719802856, -0.5210360288619995,
                0.36528798937797546, -0.0666230320930481, -0.2577331066131592, 0.46168002486228943,
                -0.4665539860725403);

        Generator g = new Generator(1);
        Tensor x = Tensors.randn(g, 4, 2, 2);
        Tensor h0 = Tensors.randn(g, 2, 2, 3);
        Tensor c0 = Tensors.randn(g, 2, 2, 3);
        assertValues(c0, 0, 3.586989402770996, -1.8312901258468628, 1.5987002849578857, -1.277006983757019,
                0.32550153136253357, -0.4791449308395386, 1.3790082931518555, 2.528557300567627, 0.4107416570186615,
                -0.988007128238678, -0.908073365688324, 0.5422736406326294);
        LSTM.Result r = lstm.forward(x, new LSTM.State(h0, c0));
        assertThat(r.output().shape()).containsExactly(4, 2, 3);
        assertValues(r.output(), 1e-6, 0.025939106941223145, 0.5101426839828491, -0.10121828317642212,
                -0.3633352220058441, -0.5975983738899231, 0.16308316588401794, -0.18114185333251953,
                0.46694689989089966, -0.14095042645931244, -0.2952931821346283, -0.4928506910800934,
                0.1529911905527115, -0.26332664489746094, 0.3980615735054016, -0.13025492429733276,
                -0.2955420911312103, -0.44806405901908875, 0.12131978571414948, -0.30089497566223145,
                0.30706483125686646, -0.11426642537117004, -0.29481521248817444, -0.38947030901908875,
                0.0945737287402153);
        assertValues(r.state().h(), 1e-6, 0.6531205773353577, -0.41766855120658875, -0.014265441335737705,
                0.19565503299236298, -0.20491668581962585, -0.09019749611616135, -0.30089497566223145,
                0.30706483125686646, -0.11426642537117004, -0.29481521248817444, -0.38947030901908875,
                0.0945737287402153);
        assertValues(r.state().c(), 1e-6, 1.339599847793579, -0.6129328012466431, -0.03199468553066254,
                0.2722436487674713, -0.3549385666847229, -0.27602246403694153, -0.6701518297195435,
                0.5115251541137695, -0.2530624270439148, -0.7168890237808228, -0.6517188549041748,
                0.2688678205013275);

        r.output().pow(2).sum().add(r.state().c().sum()).backward();
        assertValues(p.get("weight_ih_l0").grad(), 1e-5, -0.37612828612327576, -0.364073246717453,
                0.03591819107532501, -0.23249144852161407, 0.006904813926666975, 0.0884750708937645,
                -0.5507469773292542, 0.40084514021873474, 0.06726986914873123, -0.31226497888565063,
                0.2722545564174652, 0.03953989967703819, -0.5372384190559387, 1.2310922145843506, -0.620161235332489,
                0.17622897028923035, -0.04392662271857262, 0.9231194853782654, -0.03361049294471741,
                -0.009234772063791752, -0.19210359454154968, -0.06484522670507431, 0.08020653575658798,
                0.11033423244953156);
        assertValues(p.get("weight_hh_l1").grad(), 1e-5, 0.06798426061868668, -0.09591446816921234,
                -0.01964772306382656, -0.06632208824157715, -0.11052914708852768, -0.051231712102890015,
                -0.025469385087490082, -0.1303820013999939, 0.019902808591723442, 0.01571178436279297,
                -0.1282590925693512, 0.004992329515516758, 0.03550965338945389, 0.2994663119316101,
                -0.316023051738739, -0.07257799804210663, -0.2167527973651886, 0.04350952059030533,
                -0.07266554981470108, 0.028692960739135742, 0.006156950257718563, 0.010432705283164978,
                0.655430257320404, -0.18132269382476807, -0.6360323429107666, -0.5131906867027283,
                0.06360874325037003, -0.2438989281654358, -0.36351802945137024, 0.0020408853888511658,
                -0.18303880095481873, -0.321442574262619, -0.09886205196380615, -0.04657289758324623,
                -0.09263016283512115, 0.0037831244990229607);
        assertValues(p.get("bias_ih_l1").grad(), 1e-5, -0.2194279432296753, 0.30282434821128845,
                0.04550742357969284, -0.2343669831752777, 1.385623812675476, 0.17340877652168274,
                0.21865849196910858, 1.0968376398086548, 2.1571099758148193, 0.7574302554130554, 1.1947028636932373,
                0.14933158457279205);
    }

    @Test
    void lstmBatchFirstZeroStateAndUnbatchedMatchTorch() {
        // torch.manual_seed(3); l2 = nn.LSTM(3, 2, batch_first=True); l2(xb) and l2(xb[0])
        LSTM lstm = new LSTM(3, 2, 1, 0, true, new Generator(3));
        Tensor xb = Tensors.randn(new Generator(4), 2, 3, 3);
        LSTM.Result r = lstm.forward(xb, null);
        assertValues(r.output(), 1e-6, 0.13175518810749054, -0.03986575827002525, 0.15620079636573792,
                -0.1348228007555008, 0.13358432054519653, -0.17741438746452332, 0.07157339155673981,
                0.12532569468021393, 0.17846255004405975, -0.17570717632770538, 0.34136128425598145,
                -0.5912553668022156);
        assertValues(r.state().h(), 1e-6, 0.13358432054519653, -0.17741438746452332, 0.34136128425598145,
                -0.5912553668022156);
        assertValues(r.state().c(), 1e-6, 0.1914406716823578, -0.2988816201686859, 0.6157984733581543,
                -0.7566705942153931);
        LSTM.Result u = lstm.forward(xb.get(0), null);
        assertThat(u.output().shape()).containsExactly(3, 2);
        assertThat(u.state().h().shape()).containsExactly(1, 2);
        assertValues(u.state().h(), 1e-6, 0.13358432054519653, -0.17741438746452332);
        assertThat(lstm.forward(xb.get(0)).allclose(u.output())).isTrue();
    }

    @Test
    void lstmDropoutOnlyBetweenLayersInTrainingAndStateChecks() {
        LSTM lstm = new LSTM(2, 4, 3, 0.5, false, new Generator(0));
        assertThat(lstm.toString()).isEqualTo("LSTM(2, 4, num_layers=3, dropout=0.5)");
        Tensor x = Tensors.randn(new Generator(1), 5, 3, 2);
        Tensor train1 = lstm.forward(x);
        Tensor train2 = lstm.forward(x);
        assertThat(train1.equal(train2)).isFalse(); // fresh masks each call
        lstm.eval();
        assertThat(lstm.isTraining()).isFalse();
        assertThat(lstm.forward(x).equal(lstm.forward(x))).isTrue();
        // Carrying a detached state over keeps the values but cuts the graph (truncated BPTT).
        LSTM.State s = lstm.forward(x, null).state().detach();
        assertThat(s.h().requiresGrad()).isFalse();
        assertThat(lstm.forward(x, s).output().requiresGrad()).isTrue();
        assertThatThrownBy(() -> lstm.forward(x, new LSTM.State(Tensors.zeros(3, 3, 5), Tensors.zeros(3, 3, 4))))
                .hasMessage("Expected hidden hx[0] size [3, 3, 4], got [3, 3, 5]");
        assertThatThrownBy(() -> lstm.forward(Tensors.zeros(5, 3, 7)))
                .hasMessage("input.size(-1) must be equal to input_size. Expected 2, got 7");
        assertThat(lstm.parameters()).allMatch(t -> t instanceof Parameter);
    }
}
