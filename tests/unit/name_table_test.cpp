// Enum name tables: names both ways, the fallback for a value outside the table, and the tables
// of the enums whose names are also parsed (MLX modes) read back to their values.
#include <catch2/catch.hpp>

#include "mlens/compat/rewrite_plan.h"
#include "mlens/quant/mlx_quant.h"
#include "mlens/util/name_table.h"

using namespace mlens;

namespace {

enum class Shade { light, dark, unnamed };
constexpr NameRow<Shade> kShades[] = {{Shade::light, "light"}, {Shade::dark, "dark"}};

}  // namespace

TEST_CASE("a name table names each value and finds each name", "[name_table]") {
    CHECK(std::string(name_of(kShades, Shade::dark)) == "dark");
    CHECK(std::string(name_of(kShades, Shade::unnamed)) == "?");
    CHECK(name_of(kShades, Shade::unnamed, nullptr) == nullptr);
    CHECK(value_of(kShades, "light") == Shade::light);
    CHECK_FALSE(value_of(kShades, "Light"));
    CHECK_FALSE(value_of(kShades, ""));
    static_assert(*value_of(kShades, "dark") == Shade::dark);
}

TEST_CASE("every MLX mode and compat data op has its own name", "[name_table]") {
    for (MlxMode m : {MlxMode::affine, MlxMode::nvfp4, MlxMode::mxfp4, MlxMode::mxfp8}) CHECK(mlx_mode_from_name(mlx_mode_name(m)) == m);
    CHECK_FALSE(mlx_mode_from_name("?"));
    CHECK(std::string(compat::data_op_name(compat::DataOpKind::f16_to_f32)) == "F16→F32");
    CHECK(std::string(compat::edit_kind_name(compat::EditKind::data_op)) == "data op");
}
