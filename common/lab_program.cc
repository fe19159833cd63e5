#include "common/lab_program.h"

#include <exception>
#include <iostream>
#include <stdexcept>

namespace mha {

int RunLabProgram(const LabProgram& program, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::invalid_argument& e) {
    // invalid_argument is a logic_error too: catch it first. A bad flag, or a
    // lab that rejected what the program gave it.
    std::cerr << program.name << ": " << e.what() << "\n" << program.usage;
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    if (what.find("not implemented yet") != std::string::npos) {
      std::cerr << program.name << " runs " << program.uses
                << ", and one of them is still a stub:\n  " << what
                << "\nFinish that lab (or, in the instructors' repository, run the reference "
                   "solutions with `"
                << program.solutions_command << "`).\n";
    } else {
      std::cerr << program.name << ": " << what << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << program.name << ": " << e.what() << "\n";
  }
  return 1;
}

}  // namespace mha
