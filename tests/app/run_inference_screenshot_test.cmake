# Renders the Inference panel in the real window under Xvfb after running one of its views
# (--select infer:VIEW: load MODEL_A into llama.cpp, run VIEW; ab compares with MODEL_B) and
# checks the PNG. Inputs: XVFB_RUN, APP, TOOL, WORK_DIR, VIEW, MODEL_A, optional MODEL_B.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/config)
set(png ${WORK_DIR}/inference-${VIEW}.png)

set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
execute_process(
  COMMAND ${XVFB_RUN} -a -s "-screen 0 1600x1000x24"
          ${APP} --screenshot ${png} --frames 4 --size 1600x1000 --select infer:${VIEW} ${MODEL_A} ${MODEL_B}
  RESULT_VARIABLE rc
  TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "modellens --screenshot --select infer:${VIEW} failed (${rc})")
endif()

execute_process(COMMAND ${TOOL} check-png ${png} 1600 1000 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the screenshot ${png} is not a rendered frame")
endif()
file(GLOB leftovers ${WORK_DIR}/config/*)
if(leftovers)
  message(FATAL_ERROR "screenshot mode wrote settings: ${leftovers}")
endif()
