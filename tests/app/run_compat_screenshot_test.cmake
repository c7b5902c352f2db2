# Renders one file in the real window under Xvfb with the Compat panel in front, and checks the
# PNG. Inputs: XVFB_RUN, APP, TOOL, WORK_DIR, FILE, THEME (dark or light).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/config)
get_filename_component(stem ${FILE} NAME_WE)
set(png ${WORK_DIR}/compat-${stem}-${THEME}.png)
set(ENV{XDG_CONFIG_HOME} ${WORK_DIR}/config)
execute_process(
  COMMAND ${XVFB_RUN} -a -s "-screen 0 1600x1000x24"
          ${APP} --screenshot ${png} --frames 6 --size 1600x1000 --panel compat --theme ${THEME} ${FILE}
  RESULT_VARIABLE rc
  TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "modellens --screenshot failed (${rc})")
endif()
execute_process(COMMAND ${TOOL} check-png ${png} 1600 1000 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the screenshot ${png} is not a rendered frame")
endif()
