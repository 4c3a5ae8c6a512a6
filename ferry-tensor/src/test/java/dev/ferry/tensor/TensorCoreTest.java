package dev.ferry.tensor;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TensorCoreTest {

    @Test
    void factoriesPickDtypeFromJavaType() {
        assertThat(Tensors.of(1f, 2f).dtype()).isEqualTo(DType.FLOAT32);
        assertThat(Tensors.of(1.0, 2.0).dtype()).isEqualTo(DType.FLOAT64);
        assertThat(Tensors.of(1L, 2L).dtype()).isEqualTo(DType.INT64);
        assertThat(Tensors.of(1, 2).dtype()).isEqualTo(DType.INT32);
        assertThat(Tensors.of(true).dtype()).isEqualTo(DType.BOOL);
        assertThat(Tensors.zeros(2, 3).shape()).containsExactly(2, 3);
        assertThat(Tensors.full(7, DType.INT64, 2).toLongArray()).containsExactly(7, 7);
        assertThat(Tensors.eye(2).toFloatArray()).containsExactly(1, 0, 0, 1);
        assertThat(Tensors.arange(1, 10, 3).toLongArray()).containsExactly(1, 4, 7);
        assertThat(Tensors.linspace(0, 1, 5).toFloatArray()).containsExactly(0f, 0.25f, 0.5f, 0.75f, 1f);
    }

    @Test
    void fromWrapsWithoutCopy() {
        float[] data = {1, 2, 3, 4, 5, 6};
        Tensor t = Tensors.from(data, 2, 3);
        data[4] = 50;
        assertThat(t.getDouble(1, 1)).isEqualTo(50);
        assertThatThrownBy(() -> Tensors.from(data, 4, 2))
                .hasMessageContaining("shape [4, 2] needs 8 elements but the array has 6");
    }

    @Test
    void stridesAndViewsShareStorage() {
        Tensor t = Tensors.arange(24).reshape(2, 3, 4);
        assertThat(t.strides()).containsExactly(12, 4, 1);
        Tensor tr = t.transpose(0, 2);
        assertThat(tr.shape()).containsExactly(4, 3, 2);
        assertThat(tr.strides()).containsExactly(1, 4, 12);
        assertThat(tr.isContiguous()).isFalse();
        assertThat(tr.storage()).isSameAs(t.storage());
        assertThat(tr.getLong(3, 2, 1)).isEqualTo(t.getLong(1, 2, 3));

        Tensor row = t.select(1, 2);
        assertThat(row.shape()).containsExactly(2, 4);
        row.fill_(-1);
        assertThat(t.getLong(1, 2, 0)).isEqualTo(-1);

        Tensor sl = Tensors.arange(10).slice(0, 1, 8, 3);
        assertThat(sl.toLongArray()).containsExactly(1, 4, 7);
        assertThat(Tensors.arange(10).narrow(0, -3 + 10, 3).toLongArray()).containsExactly(7, 8, 9);
        assertThat(Tensors.arange(6).reshape(2, 3).t().contiguous().toLongArray()).containsExactly(0, 3, 1, 4, 2, 5);
    }

    @Test
    void narrowCountsANegativeStartFromTheEndAndRefusesARangePastTheEnd() {
        // torch.arange(10).narrow(0, -3, 2) is tensor([7, 8]); slice would clamp [-3, -1) to empty
        assertThat(Tensors.arange(10).narrow(0, -3, 2).toLongArray()).containsExactly(7, 8);
        assertThat(Tensors.arange(10).narrow(0, 10, 0).shape()).containsExactly(0);
        Tensor x = Tensors.zeros(2, 3);
        // messages of torch.zeros(2, 3).narrow(1, 2, 2) and .narrow(1, 0, -1) in PyTorch 1.13
        assertThatThrownBy(() -> x.narrow(1, 2, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("start (2) + length (2) exceeds dimension size (3).");
        assertThatThrownBy(() -> x.narrow(1, -1, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("start (2) + length (2) exceeds dimension size (3).");
        assertThatThrownBy(() -> x.narrow(1, 0, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("narrow(): length must be non-negative.");
        assertThatThrownBy(() -> x.narrow(1, 4, 0)).isInstanceOf(IndexOutOfBoundsException.class)
                .hasMessage("start out of range (expected to be in range of [-3, 3], but got 4)");
        assertThatThrownBy(() -> Tensors.scalar(1).narrow(0, 0, 1)).hasMessageContaining("0-dim");
    }

    @Test
    void viewRequiresCompatibleStrides() {
        Tensor t = Tensors.arange(6).reshape(2, 3);
        assertThat(t.view(3, -1).shape()).containsExactly(3, 2);
        assertThatThrownBy(() -> t.t().view(6))
                .hasMessageContaining("view size is not compatible").hasMessageContaining("reshape");
        assertThat(t.t().reshape(6).toLongArray()).containsExactly(0, 3, 1, 4, 2, 5);
        assertThatThrownBy(() -> t.view(4, 2)).hasMessage("shape '[4, 2]' is invalid for input of size 6");
        // A transposed view with an untouched leading dim still views without a copy.
        Tensor b = Tensors.arange(24).reshape(2, 3, 4).transpose(0, 1);
        Tensor v = b.view(3, 2, 2, 2);
        assertThat(v.storage()).isSameAs(b.storage());
        assertThat(v.strides()).containsExactly(4, 12, 2, 1);
        assertThatThrownBy(() -> b.view(6, 4)).hasMessageContaining("view size is not compatible");
    }

    @Test
    void squeezeUnsqueezeExpandPermute() {
        Tensor t = Tensors.zeros(1, 3, 1);
        assertThat(t.squeeze().shape()).containsExactly(3);
        assertThat(t.squeeze(0).shape()).containsExactly(3, 1);
        assertThat(t.unsqueeze(-1).shape()).containsExactly(1, 3, 1, 1);
        Tensor e = Tensors.of(1f, 2f, 3f).unsqueeze(0).expand(4, -1);
        assertThat(e.shape()).containsExactly(4, 3);
        assertThat(e.strides()).containsExactly(0, 1);
        assertThat(Tensors.zeros(2, 3, 4).permute(2, 0, 1).shape()).containsExactly(4, 2, 3);
        assertThatThrownBy(() -> Tensors.zeros(2, 3).expand(2, 4))
                .hasMessageContaining("The expanded size of the tensor (4) must match the existing size (3)");
        assertThatThrownBy(() -> Tensors.zeros(2, 3).transpose(0, 2))
                .hasMessage("Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    }

    @Test
    void catStackSplit() {
        Tensor a = Tensors.of(new float[][] {{1, 2}, {3, 4}});
        Tensor b = Tensors.of(new float[][] {{5, 6}});
        assertThat(Tensors.cat(List.of(a, b), 0).toFloatArray()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(Tensors.stack(List.of(a, a), 2).shape()).containsExactly(2, 2, 2);
        assertThat(Tensors.arange(7).split(3, 0)).hasSize(3);
        assertThat(Tensors.arange(7).chunk(2, 0).get(1).toLongArray()).containsExactly(4, 5, 6);
        assertThat(Tensors.arange(3).chunk(5, 0)).as("fewer pieces than asked, as PyTorch").hasSize(3);
        for (int chunks : new int[] {0, -2}) { // were an ArithmeticException and three pieces
            assertThatThrownBy(() -> Tensors.arange(7).chunk(chunks, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("chunk expects `chunks` to be greater than 0, got: " + chunks);
        }
        assertThatThrownBy(() -> Tensors.cat(List.of(a, Tensors.zeros(1, 3)), 0))
                .hasMessageContaining("Sizes of tensors must match except in dimension 0");
    }

    @Test
    void itemAndConversions() {
        assertThat(Tensors.scalar(2.5).item()).isEqualTo(2.5);
        assertThat(Tensors.of(1.7f, -1.7f).to(DType.INT64).toLongArray()).containsExactly(1, -1);
        assertThat(Tensors.of(0L, 3L).to(DType.BOOL).toBooleanArray()).containsExactly(false, true);
        assertThatThrownBy(() -> Tensors.zeros(2).item())
                .hasMessage("a Tensor with 2 elements cannot be converted to Scalar");
        Tensor c = Tensors.of(1f, 2f);
        Tensor d = c.clone();
        d.fill_(0);
        assertThat(c.toFloatArray()).containsExactly(1, 2);
    }

    @Test
    void negativeShapesAreRejected() {
        assertThatThrownBy(() -> Tensors.zeros(2, -1)).hasMessageContaining("negative dimension -1");
    }
}
